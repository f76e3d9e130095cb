import type { Route } from '../router.js';

/** What main.ts mounts: a view fetches its own data and refetches it on `refresh` (live changes). */
export interface View {
  readonly element: HTMLElement;
  /** Refetches and updates in place (keeping filters, scroll and focus). */
  refresh(): Promise<void>;
  /** Takes a new route of the same kind without rebuilding (e.g. new filters); false: rebuild. */
  update?(route: Route): boolean;
  dispose?(): void;
}
