// Pretty JSON with light colouring, built from text nodes: the event's values come from outside.

import { h } from './dom.js';

// Over JSON.stringify's own output, so the token shapes are known: keys, strings, literals, numbers.
const TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;

export function jsonPre(value: unknown, props: Record<string, string> = {}): HTMLPreElement {
  const text = JSON.stringify(value, null, 2) ?? 'null';
  const pre = h('pre', { class: 'json', tabindex: '0', ...props });
  let last = 0;
  for (const match of text.matchAll(TOKEN)) {
    const index = match.index ?? 0;
    if (index > last) pre.append(text.slice(last, index));
    const [whole, string, colon, literal] = match;
    const kind = string !== undefined ? (colon !== undefined ? 'key' : 'str') : literal !== undefined ? 'lit' : 'num';
    pre.append(h('span', { class: `j-${kind}` }, string ?? whole));
    if (colon !== undefined) pre.append(colon);
    last = index + whole.length;
  }
  if (last < text.length) pre.append(text.slice(last));
  return pre;
}
