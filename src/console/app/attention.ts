// The apps list's order: what needs attention first (dead, then failing, then pending), then the
// most recent. No DOM here, so a unit test can hold it.

export interface Attention {
  app: string;
  dead: number;
  failing: number;
  pending: number;
  updatedAt: string;
}

export function byAttention(a: Attention, b: Attention): number {
  return (
    b.dead - a.dead ||
    b.failing - a.failing ||
    b.pending - a.pending ||
    Date.parse(b.updatedAt) - Date.parse(a.updatedAt) ||
    a.app.localeCompare(b.app)
  );
}
