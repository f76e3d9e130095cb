// Hash routing: `#/deliveries?state=dead`, `#/deliveries/42`, `#/apps`, `#/apps/billing-api`, `#/gaps`, `#/stats`.
// The hash keeps back/forward and reloads working without any server route.

export type Route =
  | { name: 'deliveries'; query: URLSearchParams }
  | { name: 'delivery'; id: string }
  | { name: 'apps' }
  | { name: 'app'; app: string }
  | { name: 'gaps' }
  | { name: 'stats' }
  | { name: 'not-found'; path: string };

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const mark = raw.indexOf('?');
  const path = mark === -1 ? raw : raw.slice(0, mark);
  const query = new URLSearchParams(mark === -1 ? '' : raw.slice(mark + 1));
  const parts = path.split('/').filter((part) => part !== '');
  const [first, second] = parts.map(decode);
  if (parts.length === 0 || (first === 'deliveries' && parts.length === 1)) return { name: 'deliveries', query };
  if (first === 'deliveries' && parts.length === 2 && second !== undefined) return { name: 'delivery', id: second };
  if (first === 'apps' && parts.length === 1) return { name: 'apps' };
  if (first === 'apps' && parts.length === 2 && second !== undefined) return { name: 'app', app: second };
  if (first === 'gaps' && parts.length === 1) return { name: 'gaps' };
  if (first === 'stats' && parts.length === 1) return { name: 'stats' };
  return { name: 'not-found', path };
}

export const href = {
  deliveries: (params: Record<string, string | undefined> = {}): string => {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(key, value);
    const text = search.toString();
    return `#/deliveries${text === '' ? '' : `?${text}`}`;
  },
  delivery: (id: string): string => `#/deliveries/${encodeURIComponent(id)}`,
  apps: (): string => '#/apps',
  app: (app: string): string => `#/apps/${encodeURIComponent(app)}`,
  gaps: (): string => '#/gaps',
  stats: (): string => '#/stats',
};

export function currentRoute(): Route {
  return parseRoute(location.hash);
}

export function navigate(hash: string): void {
  if (location.hash !== hash) location.hash = hash;
}
