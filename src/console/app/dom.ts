// Builds DOM without ever parsing HTML: text from the API only ever lands in text nodes
// (event fields come from outside), and the CSP forbids inline styles, so there is no `style` prop.

export type Child = Node | string | number | null | undefined | false | readonly Child[];
type Handler = (event: Event) => void;
export type Props = Record<string, string | number | boolean | null | undefined | Handler>;

function setProps(element: Element, props: Props | undefined): void {
  if (props === undefined) return;
  for (const [name, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') {
      element.addEventListener(name.slice(2).toLowerCase(), value as Handler);
    } else if (name === 'style') {
      throw new Error('no inline styles: the CSP forbids them, use a class');
    } else {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child as readonly Child[]);
    else parent.appendChild(typeof child === 'object' ? (child as Node) : document.createTextNode(String(child)));
  }
}

/** `h('a', { href: '#/x', class: 'link', onClick: fn }, 'text', otherNode)` */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  setProps(element, props);
  append(element, children);
  return element;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function s<K extends keyof SVGElementTagNameMap>(tag: K, props?: Props, ...children: Child[]): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG_NS, tag);
  setProps(element, props);
  append(element, children);
  return element;
}

export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.textContent = '';
  append(parent, children);
}

/** A definition list from [term, value] pairs; pairs with an undefined value are left out. */
export function facts(pairs: ReadonlyArray<readonly [string, Child]>, props?: Props): HTMLDListElement {
  const list = h('dl', { class: 'facts', ...props });
  for (const [term, value] of pairs) {
    if (value === undefined || value === null || value === '') continue;
    list.append(h('dt', undefined, term), h('dd', undefined, value));
  }
  return list;
}

/**
 * Runs `rebuild` (which replaces elements inside `container`) and puts the focus back on the
 * element with the same `data-key`, so a live refresh does not throw a keyboard user out.
 * Returns false when the focused element had a key but no counterpart came back.
 */
export function keepFocus(container: Element, rebuild: () => void): boolean {
  const focused = document.activeElement;
  const key = focused !== null && container.contains(focused) ? focused.closest<HTMLElement>('[data-key]')?.dataset['key'] : undefined;
  rebuild();
  if (key === undefined || focused?.isConnected === true) return true;
  const again = container.querySelector<HTMLElement>(`[data-key="${CSS.escape(key)}"]`);
  again?.focus();
  return again !== null && document.activeElement === again;
}
