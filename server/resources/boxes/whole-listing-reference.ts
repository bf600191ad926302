/**
 * The answer of List all files made as it was before listings were kept as bytes (box-listing.ts): every box of the
 * project read, and the whole list serialised at once, as res.json made it. The tests of the kept listing compare its
 * bytes with this, after every kind of write.
 */
import type { Store } from '../../repositories.ts';
import type { BoxRecord } from './box-repository.ts';
import { boxJson } from './box-json.ts';

export async function wholeListingReference(store: Store, projectId: string): Promise<string> {
  const all = await store.boxes.listProject(projectId);
  const children = new Map<string, BoxRecord[]>();
  for (const box of all) if (box.parentId) children.set(box.parentId, [...(children.get(box.parentId) ?? []), box]);
  for (const list of children.values()) list.sort((a, b) => a.position - b.position || (a.id < b.id ? -1 : 1));
  return JSON.stringify(all.filter((box) => !box.hidden).map((box) => boxJson(box, children.get(box.id))));
}
