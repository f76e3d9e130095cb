// The delivery log: filters in the hash (so back/forward and reloads keep them), newest first, paged.

import { ApiError, getJson, query } from '../api.js';
import { h } from '../dom.js';
import { plural } from '../format.js';
import { deliveryTable, reconcileRows } from '../rows.js';
import { href, navigate, type Route } from '../router.js';
import { DELIVERY_STATES, type AppSummary, type DeliveryPage } from '../types.js';
import { clearError, showError } from '../ui.js';
import type { View } from './view.js';

const FILTERS = ['action', 'app', 'state', 'from', 'to'] as const;
type Filter = (typeof FILTERS)[number];
const PAGE_SIZE = '50';

/** "2026-04-27" or "2026-04-27T10:00" without an offset: UTC, as every time on the page. */
export function normalizeTime(value: string): string {
  const text = value.trim().replace(' ', 'T');
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return `${text}T00:00:00Z`;
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text)) return `${text}${text.length === 16 ? ':00' : ''}Z`;
  return text;
}

/** The filter a `bad_filter` message names first (the server's messages start with it). */
function namedFilter(message: string): Filter | undefined {
  let found: Filter | undefined;
  let at = Number.POSITIVE_INFINITY;
  for (const name of FILTERS) {
    const index = message.search(new RegExp(`\\b${name}\\b`));
    if (index !== -1 && index < at) [found, at] = [name, index];
  }
  return found;
}

function field(id: string, label: string, input: HTMLElement, hint?: Node): HTMLElement {
  return h('div', { class: 'field' }, h('label', { for: id }, label, hint), input);
}

export function deliveriesView(initial: URLSearchParams): View {
  let params = initial;
  const inputs = {
    action: h('input', {
      id: 'filter-action',
      name: 'action',
      type: 'text',
      class: 'mono',
      placeholder: 'app:budget:*',
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-describedby': 'filter-help',
    }),
    app: h('input', {
      id: 'filter-app',
      name: 'app',
      type: 'text',
      class: 'mono',
      placeholder: 'any app',
      autocomplete: 'off',
      spellcheck: 'false',
      list: 'filter-app-list',
    }),
    state: h(
      'select',
      { id: 'filter-state', name: 'state' },
      h('option', { value: '' }, 'any'),
      DELIVERY_STATES.map((state) => h('option', { value: state }, state)),
    ),
    from: h('input', {
      id: 'filter-from',
      name: 'from',
      type: 'text',
      class: 'mono',
      placeholder: '2026-04-27T10:00:00Z',
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-describedby': 'filter-help',
    }),
    to: h('input', {
      id: 'filter-to',
      name: 'to',
      type: 'text',
      class: 'mono',
      placeholder: '2026-04-27T12:00:00Z',
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-describedby': 'filter-help',
    }),
  };
  const appList = h('datalist', { id: 'filter-app-list' });
  const clear = h('button', { type: 'button', class: 'btn btn-quiet' }, 'Clear');
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter deliveries', novalidate: true },
    field('filter-action', 'Action', inputs.action, h('kbd', { title: 'Press / to focus the action filter', 'aria-hidden': 'true' }, '/')),
    field('filter-app', 'App', inputs.app),
    field('filter-state', 'State', inputs.state),
    field('filter-from', 'From (event time)', inputs.from),
    field('filter-to', 'To', inputs.to),
    h('div', { class: 'field field-buttons' }, h('button', { type: 'submit', class: 'btn btn-primary' }, 'Apply'), clear),
    appList,
    h(
      'p',
      { id: 'filter-help', class: 'hint' },
      'Action: an exact action or a prefix ending in :* (comma-separate several). Times: RFC 3339; without an offset they are read as UTC.',
    ),
  );
  const summary = h('p', { class: 'summary', 'aria-live': 'polite' });
  const { element: tableElement, body } = deliveryTable();
  const newest = h('button', { type: 'button', class: 'btn', hidden: true }, 'Newest');
  const older = h('button', { type: 'button', class: 'btn', 'data-testid': 'next-page', hidden: true }, 'Older');
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' }, newest, older);
  const element = h('section', { class: 'view' }, h('h1', { tabindex: '-1' }, 'Deliveries'), form, summary, tableElement, pager);

  let next: string | null = null;
  let generation = 0;

  const filterParams = (): Record<Filter, string | undefined> => {
    const values = {} as Record<Filter, string | undefined>;
    for (const name of FILTERS) values[name] = params.get(name) ?? undefined;
    return values;
  };

  const fillForm = (): void => {
    inputs.action.value = params.get('action') ?? '';
    inputs.app.value = params.get('app') ?? '';
    inputs.from.value = params.get('from') ?? '';
    inputs.to.value = params.get('to') ?? '';
    const state = params.get('state') ?? '';
    // A list such as "dead,pending" (from a link) gets its own option so the select can show it.
    if (state !== '' && ![...inputs.state.options].some((option) => option.value === state))
      inputs.state.append(h('option', { value: state }, state.replace(/,/g, ', ')));
    inputs.state.value = state;
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const target = href.deliveries({
      action: inputs.action.value.trim().replace(/\s*,\s*/g, ','),
      app: inputs.app.value.trim(),
      state: inputs.state.value,
      from: inputs.from.value === '' ? '' : normalizeTime(inputs.from.value),
      to: inputs.to.value === '' ? '' : normalizeTime(inputs.to.value),
    });
    if (location.hash === target) void refresh();
    else navigate(target);
  });
  clear.addEventListener('click', () => {
    navigate(href.deliveries());
    inputs.action.focus();
  });
  newest.addEventListener('click', () => navigate(href.deliveries(filterParams())));
  older.addEventListener('click', () => {
    if (next !== null) navigate(href.deliveries({ ...filterParams(), after: next }));
  });

  async function refresh(): Promise<void> {
    const mine = ++generation;
    try {
      const page = await getJson<DeliveryPage>(
        `/api/deliveries${query({ ...filterParams(), after: params.get('after') ?? undefined, limit: PAGE_SIZE })}`,
      );
      if (mine !== generation) return; // a newer request (other filters) owns the table
      clearError();
      markInvalid(undefined);
      next = page.next;
      const filtered = FILTERS.some((name) => params.has(name));
      reconcileRows(
        body,
        page.deliveries,
        filtered ? 'No delivery matches these filters.' : 'No deliveries yet: they appear here as soon as the inbox receives them.',
      );
      const paged = params.has('after');
      summary.textContent = `${plural(page.deliveries.length, 'delivery', 'deliveries')} shown, newest event first${paged ? ' (an older page)' : ''}${filtered ? ', filtered' : ''}.`;
      newest.hidden = !paged;
      older.hidden = page.next === null;
    } catch (error) {
      if (mine !== generation) return;
      showError(error);
      if (error instanceof ApiError && error.code === 'bad_filter') {
        // Rows of the previous filters under this one's error would mislead: empty the table.
        markInvalid(namedFilter(error.message));
        reconcileRows(body, [], 'Fix the filter above: the server refused it.');
        summary.textContent = '';
        newest.hidden = older.hidden = true;
      }
    }
  }

  function markInvalid(name: Filter | undefined): void {
    for (const filter of FILTERS) {
      if (filter === name) inputs[filter].setAttribute('aria-invalid', 'true');
      else inputs[filter].removeAttribute('aria-invalid');
    }
  }

  getJson<{ apps: AppSummary[] }>('/api/apps')
    .then(({ apps }) => appList.replaceChildren(...apps.map((app) => h('option', { value: app.app }))))
    .catch(() => undefined); // only suggestions: the table reports errors

  fillForm();
  return {
    element,
    refresh,
    update(route: Route): boolean {
      if (route.name !== 'deliveries') return false;
      params = route.query;
      fillForm();
      void refresh();
      return true;
    },
  };
}
