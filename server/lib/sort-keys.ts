/**
 * A list's order as a sort key per item: compared element by element,
 * numbers as numbers and strings by code unit. Each list's key ends with the
 * item's id, so that the order is total. The paging of lists
 * (http/paging.ts) cuts pages by these keys.
 */
export type SortKey = Array<string | number>;

export function compareKeys(a: SortKey, b: SortKey): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] === b[i]) continue;
    return a[i] < b[i] ? -1 : 1;
  }
  return a.length - b.length;
}

/** Newest first, then by id: the order of players and projects. */
export const newestFirst = (item: { timeCreated: number; id: string }): SortKey => [-item.timeCreated, item.id];
/** Oldest first, then by id: the order of comments. */
export const oldestFirst = (item: { timeCreated: number; id: string }): SortKey => [item.timeCreated, item.id];
