/**
 * The pages of List all files (GET /projects/:id/all with `limit` or
 * `cursor`), read by keyset from the store: only the page's boxes and the
 * children their JSON names, not the whole project. The answer is the one
 * http/paging.ts pageOf would cut from the whole listing (boxes-service.ts
 * listAll): the same boxes in the same order (listOrder), each the same
 * JSON, and the same Link. The whole listing, without `limit` and
 * `cursor`, stays listAll's, from its cache.
 */
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { accessProject, type Caller } from '../../auth/access.ts';
import type { PageAsked } from '../../http/paging.ts';
import { boxJson } from './boxes-service.ts';
import type { BoxRecord, ChildLabel } from './box-repository.ts';

/** The ports this service uses, and nothing more. */
type Ports = Pick<Context, 'store'>;

/** The types of the parts of listOrder's sort key, which the cursors of List all files hold: the kind's rank, the creation time, the id. */
export const LIST_ORDER_KEY_SHAPE: Array<'number' | 'string'> = ['number', 'number', 'string'];

/**
 * The project's boxes of the page `ask` names (called once the caller may
 * read the project, so that a project they cannot see is a 404 before a
 * bad cursor is a 400, as when the page is cut from the whole listing):
 * at most `asked.limit + 1` of them, for http/paging.ts keysetPage.
 */
export async function listAllPage(ctx: Ports, caller: Caller, projectId: string, ask: () => PageAsked): Promise<{ asked: PageAsked; read: Schemas['Box'][] }> {
  await accessProject(ctx, caller, projectId, 'read');
  const asked = ask();
  const after = asked.after && { rank: asked.after[0] as number, timeCreated: asked.after[1] as number, id: asked.after[2] as string };
  const { boxes, children: labels } = await ctx.store.boxes.listVisiblePage(projectId, after, asked.limit + 1);
  const children = new Map<string, ChildLabel[]>();
  for (const child of labels) {
    const list = children.get(child.parentId!) ?? [];
    list.push(child);
    children.set(child.parentId!, list);
  }
  // In their parent's order, as the whole listing puts them (boxes-service.ts boxesJson).
  for (const list of children.values()) list.sort((a, b) => a.position - b.position || (a.id < b.id ? -1 : 1));
  // boxJson reads only the id, name and version name of each child, which ChildLabel holds.
  return { asked, read: boxes.map((box) => boxJson(box, (children.get(box.id) ?? []) as BoxRecord[])) };
}
