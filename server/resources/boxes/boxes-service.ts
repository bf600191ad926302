/**
 * Files, folders and stacks (the interface on the box object, the box states, and the files and upload operations). Every change runs in
 * one transaction and checks all of its rules before it changes anything, so
 * a refused request leaves the project as it was.
 */
import type { Context } from '../../context.ts';
import type { SortKey } from '../../lib/sort-keys.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { Store } from '../../repositories.ts';
import { newId } from '../../lib/ids.ts';
import { accessProject, type Caller } from '../../auth/access.ts';
import { conflict, notFound } from '../../lib/problems.ts';
import { fileBlobKeys } from '../../blobs/keys.ts';
import type { BoxRecord } from './box-repository.ts';
import { buildListing, type ProjectListing } from './box-listing.ts';
import { boxJson } from './box-json.ts';
import { requireIfMatch, type IfMatch, type Versioned } from '../../http/preconditions.ts';

/** The ports this service uses, and nothing more. */
type Ports = Pick<Context, 'store' | 'blobs' | 'clock' | 'logger' | 'boxListCache'>;

export const DEFAULT_BOX_COLOR = '#64748b';

export { boxJson };

/** The JSON of several boxes of one project, with children filled in from `all`. */
function boxesJson(boxes: BoxRecord[], all: BoxRecord[]): Schemas['Box'][] {
  const children = new Map<string, BoxRecord[]>();
  for (const box of all) {
    if (!box.parentId) continue;
    const list = children.get(box.parentId) ?? [];
    list.push(box);
    children.set(box.parentId, list);
  }
  for (const list of children.values()) list.sort((a, b) => a.position - b.position || (a.id < b.id ? -1 : 1));
  return boxes.map((box) => boxJson(box, children.get(box.id)));
}

/**
 * Holds the project's boxes still until the transaction ends (see
 * BoxRepository.lockProject): taken before a write reads what it will
 * change, so what it read is still true when it writes.
 */
async function lockBoxes(store: Store, projectId: string): Promise<void> {
  if (!(await store.boxes.lockProject(projectId))) throw notFound(`No project ${projectId} exists that you can see.`);
}

async function loadBox(store: Store, projectId: string, boxId: string): Promise<BoxRecord> {
  const box = await store.boxes.get(projectId, boxId);
  if (!box) throw notFound(`Project ${projectId} has no file, folder or stack ${boxId}.`);
  return box;
}

export async function boxWithChildren(store: Store, box: BoxRecord): Promise<Schemas['Box']> {
  return boxJson(box, box.kind === 'file' ? [] : await store.boxes.children(box.id));
}

export async function getBox(ctx: Ports, caller: Caller, projectId: string, boxId: string): Promise<Versioned<Schemas['Box']>> {
  await accessProject(ctx, caller, projectId, 'read');
  const box = await loadBox(ctx.store, projectId, boxId);
  return { body: await boxWithChildren(ctx.store, box), version: box.version };
}

/** A box as it is now, with its children and version: the answer of a write, read in the write's transaction. */
async function reread(store: Store, projectId: string, boxId: string): Promise<Versioned<Schemas['Box']>> {
  const box = (await store.boxes.get(projectId, boxId))!;
  return { body: await boxWithChildren(store, box), version: box.version };
}

/** The order of List all files (box-repository listProject): folders, then stacks, then files; oldest first within each kind. */
export const listOrder = (box: { object: string; timeCreated: number; id: string }): SortKey => [KIND_RANK[box.object] ?? 3, box.timeCreated, box.id];
const KIND_RANK: Record<string, number> = { folder: 0, stack: 1, file: 2 };

/**
 * The interface on the files and upload operations: "array of all box objects in the project (files, folders,
 * stacks); hidden boxes excluded". The listing is the same for every caller
 * who may read it, so it is cached by the project's box version, read with
 * the access check: once a write has landed, from this process or any other
 * sharing the database, the next listing is rebuilt, from the previous one
 * and the boxes the write changed (box-listing.ts).
 */
export async function listAll(ctx: Ports, caller: Caller, projectId: string): Promise<ProjectListing> {
  const { project } = await accessProject(ctx, caller, projectId, 'read');
  return ctx.boxListCache.get(projectId, project.boxVersion, (previous) => buildListing(ctx.store.boxes, projectId, previous));
}

export async function listFolders(ctx: Ports, caller: Caller, projectId: string) {
  await accessProject(ctx, caller, projectId, 'read');
  const all = await ctx.store.boxes.listProject(projectId);
  return boxesJson(
    all.filter((box) => box.kind === 'folder'),
    all,
  ) as Schemas['FolderBox'][];
}

export function newBox(fields: Pick<BoxRecord, 'projectId' | 'kind' | 'name' | 'parentId' | 'position'> & Partial<BoxRecord>, now: number): BoxRecord {
  return {
    id: newId('box'),
    color: DEFAULT_BOX_COLOR,
    trashed: false,
    hidden: false,
    versionName: null,
    status: null,
    statusReason: null,
    size: null,
    mimeType: null,
    duration: null,
    audio: null,
    uploaderId: null,
    uploaderName: null,
    uploaderEmail: null,
    held: false,
    version: 1,
    timeCreated: now,
    timeModified: now,
    ...fields,
  };
}

export async function createFolder(ctx: Ports, caller: Caller, projectId: string, body: Schemas['CreateFolderRequest']): Promise<Versioned<Schemas['FolderBox']>> {
  await accessProject(ctx, caller, projectId, 'write');
  return ctx.store.transaction(async (store) => {
    await lockBoxes(store, projectId);
    const folder = newBox(
      { projectId, kind: 'folder', name: body.name, color: body.color ?? DEFAULT_BOX_COLOR, parentId: null, position: await store.boxes.nextPosition(projectId, null) },
      ctx.clock.now(),
    );
    await store.boxes.insert(folder);
    return { body: boxJson(folder) as Schemas['FolderBox'], version: folder.version };
  });
}

export async function createStack(ctx: Ports, caller: Caller, projectId: string, body: Schemas['CreateStackRequest']): Promise<Versioned<Schemas['StackBox']>> {
  await accessProject(ctx, caller, projectId, 'write');
  return ctx.store.transaction(async (store) => {
    await lockBoxes(store, projectId);
    const files = await filesOfProject(store, projectId, body.childids, 'childids');
    const now = ctx.clock.now();
    // The new stack takes the place of the first file (or of the stack that held it).
    const first = files[0];
    const firstParent = first.parentId ? await store.boxes.get(projectId, first.parentId) : undefined;
    const anchor = firstParent?.kind === 'stack' ? firstParent : first;
    const stack = newBox({ projectId, kind: 'stack', name: body.name, parentId: anchor.parentId, position: anchor.position }, now);
    await store.boxes.insert(stack);
    await moveInto(store, files, stack, now);
    return (await reread(store, projectId, stack.id)) as Versioned<Schemas['StackBox']>;
  });
}

/**
 * Changes the fields given. The whole update, from reading the box to the
 * last move, runs in one transaction holding the project's boxes (lockBoxes),
 * so a concurrent update of another field waits and then applies its change
 * to this one's result: both land. With If-Match, the version is checked
 * under the same lock, before any rule.
 */
export async function updateBox(
  ctx: Ports,
  caller: Caller,
  projectId: string,
  boxId: string,
  body: Schemas['UpdateBoxRequest'],
  ifMatch?: IfMatch,
): Promise<Versioned<Schemas['Box']>> {
  await accessProject(ctx, caller, projectId, 'write');
  return ctx.store.transaction(async (store) => {
    await lockBoxes(store, projectId);
    const box = await loadBox(store, projectId, boxId);
    requireIfMatch(ifMatch, box.version, `Box ${boxId}`, `GET /projects/${projectId}/files/${boxId}`);
    const now = ctx.clock.now();
    const container = box.kind !== 'file';
    // First every rule, then every change.
    if ((body.addids?.length || body.removeids?.length) && !container) {
      throw conflict(`addids and removeids apply to folders and stacks; ${boxId} is a file.`);
    }
    if (body.order !== undefined && !container) throw conflict(`order applies to folders and stacks; ${boxId} is a file, which has no children to order.`);
    if (body.hidden !== undefined && !container) {
      // The interface on the box object: "Only folders and stacks can be hidden."
      throw conflict(`Only folders and stacks can be hidden; ${boxId} is a file.`);
    }
    if (body.versionName !== undefined) {
      // The interface on the files and upload operations: versionName is the "Version name within the parent stack; the box must be a child of a stack".
      const parent = box.parentId ? await store.boxes.get(projectId, box.parentId) : undefined;
      if (parent?.kind !== 'stack') throw conflict(`versionName applies only to a box inside a stack; ${boxId} is not in a stack.`);
    }
    const adding = body.addids?.length ? await boxesToAdd(store, box, body.addids) : [];
    const currentChildren = body.removeids?.length ? await store.boxes.children(box.id) : [];
    const removing = (body.removeids ?? []).map((id) => {
      const child = currentChildren.find((candidate) => candidate.id === id);
      if (!child) throw conflict(`removeids: ${id} is not a child of ${boxId}.`);
      return child;
    });
    const destination = body.parentid !== undefined ? await moveDestination(store, box, body.parentid) : undefined;
    if (body.order !== undefined) await checkOrder(store, box, body.order, adding, removing);

    if (body.name !== undefined) box.name = body.name;
    if (body.hidden !== undefined) box.hidden = body.hidden;
    if (body.versionName !== undefined) box.versionName = body.versionName === '' ? null : body.versionName;
    box.timeModified = now;
    await store.boxes.save(box);
    if (adding.length > 0) await moveInto(store, adding, box, now);
    if (removing.length > 0) {
      let position = await store.boxes.nextPosition(projectId, null);
      for (const child of removing) {
        await store.boxes.save({ ...child, parentId: null, position: position++, versionName: null, timeModified: now });
      }
    }
    if (destination !== undefined && destination !== 'unchanged') {
      if (destination === null) await moveToTop(store, box, now);
      else await moveInto(store, [box], destination, now);
    }
    if (body.order !== undefined) await reorder(store, box, body.order, now);
    if (body.trashed !== undefined) {
      // The interface on the box states: "Trashing a folder or stack also trashes its contents"; restoring restores them too.
      await store.boxes.setTrashed(projectId, await store.boxes.subtreeIds(box.id), body.trashed, now);
    }
    return reread(store, projectId, boxId);
  });
}

export async function deleteFile(ctx: Ports, caller: Caller, projectId: string, boxId: string, ifMatch?: IfMatch) {
  await accessProject(ctx, caller, projectId, 'write');
  const deleted = await ctx.store.transaction(async (store) => {
    await lockBoxes(store, projectId);
    const box = await loadBox(store, projectId, boxId);
    // RFC 9110 §13.1.1 and §13.2.2: the precondition before the method's own rules, and nothing done when it fails.
    requireIfMatch(ifMatch, box.version, `Box ${boxId}`, `GET /projects/${projectId}/files/${boxId}`);
    if (box.kind !== 'file') throw conflict(`${boxId} is a ${box.kind}; only files can be deleted. Trash a ${box.kind} with trashed: true instead.`);
    await store.boxes.delete(projectId, box.id);
    await deleteIfEmptyStack(store, projectId, box.parentId);
    return box;
  });
  // The record is gone, so the bytes are unreachable; removing them after the commit cannot undo it.
  for (const key of fileBlobKeys(projectId, deleted.id)) await ctx.blobs.delete(key).catch((error) => ctx.logger.warn('blob delete failed', { boxId, key, error }));
  return {};
}

/** The boxes named by `ids`, which must all be files of the project, in order. */
async function filesOfProject(store: Store, projectId: string, ids: string[], field: string): Promise<BoxRecord[]> {
  const boxes = await Promise.all(ids.map((id) => store.boxes.get(projectId, id)));
  return boxes.map((box, i) => {
    if (!box) throw conflict(`${field}: ${ids[i]} is not a box of project ${projectId}.`);
    if (box.kind !== 'file') throw conflict(`${field}: ${ids[i]} is a ${box.kind}; a stack holds only files.`);
    return box;
  });
}

async function boxesToAdd(store: Store, container: BoxRecord, ids: string[]): Promise<BoxRecord[]> {
  if (container.kind === 'stack') return filesOfProject(store, container.projectId, ids, 'addids');
  const boxes = await Promise.all(ids.map((id) => store.boxes.get(container.projectId, id)));
  const aboveContainer = new Set([container.id, ...(await store.boxes.ancestorIds(container.id))]);
  return boxes.map((box, i) => {
    if (!box) throw conflict(`addids: ${ids[i]} is not a box of project ${container.projectId}.`);
    if (aboveContainer.has(box.id)) throw conflict(`addids: ${box.id} cannot go inside itself or its own contents.`);
    return box;
  });
}

/**
 * Where `parentid` moves a box, checked by the rules of addids: a folder or
 * stack of the project (a stack takes only files), or null for the top
 * level, never the box itself or anything inside it; 'unchanged' when the
 * box is there already, which changes nothing.
 */
async function moveDestination(store: Store, box: BoxRecord, parentId: string | null): Promise<BoxRecord | null | 'unchanged'> {
  if (parentId === box.parentId) return 'unchanged';
  if (parentId === null) return null;
  const target = await store.boxes.get(box.projectId, parentId);
  if (!target || target.kind === 'file') throw conflict(`parentid: ${parentId} is not a folder or stack of project ${box.projectId}.`);
  if (target.kind === 'stack' && box.kind !== 'file') throw conflict(`parentid: ${parentId} is a stack, which holds only files; ${box.id} is a ${box.kind}.`);
  if (target.id === box.id || (await store.boxes.ancestorIds(target.id)).includes(box.id)) {
    throw conflict(`parentid: ${box.id} cannot go inside itself or its own contents (${parentId} is inside it).`);
  }
  return target;
}

/** Moves a box to the end of the top level of the project; a stack it leaves empty goes. */
async function moveToTop(store: Store, box: BoxRecord, now: number) {
  const formerParent = box.parentId;
  await store.boxes.save({ ...box, parentId: null, position: await store.boxes.nextPosition(box.projectId, null), versionName: null, timeModified: now });
  await deleteIfEmptyStack(store, box.projectId, formerParent);
}

/**
 * `order` must be a permutation of the children the container will have
 * once this request's addids and removeids are applied: each of them once,
 * and nothing else.
 */
async function checkOrder(store: Store, container: BoxRecord, order: string[], adding: BoxRecord[], removing: BoxRecord[]) {
  const removed = new Set(removing.map((child) => child.id));
  const children = new Set((await store.boxes.children(container.id)).map((child) => child.id).filter((id) => !removed.has(id)));
  for (const added of adding) children.add(added.id);
  const named = new Set(order);
  const strangers = order.filter((id) => !children.has(id));
  const missing = [...children].filter((id) => !named.has(id));
  if (strangers.length > 0 || missing.length > 0 || named.size !== order.length) {
    const problems = [
      ...(strangers.length > 0 ? [`it names ${strangers.join(', ')}, not ${strangers.length === 1 ? 'a child' : 'children'} of ${container.id}`] : []),
      ...(missing.length > 0 ? [`it leaves out ${missing.join(', ')}`] : []),
      ...(named.size !== order.length ? ['it names a child twice'] : []),
    ];
    throw conflict(`order must list every child of ${container.id} once, and nothing else: ${problems.join('; ')}. GET the ${container.kind} for its children.`);
  }
}

/** Gives the children the positions of `order` (checked by checkOrder); in a stack, the last is the newest version. */
async function reorder(store: Store, container: BoxRecord, order: string[], now: number) {
  const children = new Map((await store.boxes.children(container.id)).map((child) => [child.id, child]));
  for (const [position, id] of order.entries()) {
    const child = children.get(id)!;
    if (child.position !== position) await store.boxes.save({ ...child, position, timeModified: now });
  }
}

/** Moves boxes to the end of a folder or stack, deleting stacks that the move leaves empty. */
async function moveInto(store: Store, boxes: BoxRecord[], container: BoxRecord, now: number) {
  let position = await store.boxes.nextPosition(container.projectId, container.id);
  const formerParents = new Set<string>();
  for (const box of boxes) {
    if (box.parentId && box.parentId !== container.id) formerParents.add(box.parentId);
    // A version name belongs to the stack it was given in.
    const versionName = box.parentId === container.id ? box.versionName : null;
    await store.boxes.save({ ...box, parentId: container.id, position: position++, versionName, timeModified: now });
  }
  for (const parentId of formerParents) await deleteIfEmptyStack(store, container.projectId, parentId);
}

/** The interface on the box states: when the only version of a stack goes, "the stack is deleted as well". */
export async function deleteIfEmptyStack(store: Store, projectId: string, stackId: string | null) {
  if (!stackId) return;
  const stack = await store.boxes.get(projectId, stackId);
  if (stack?.kind === 'stack' && (await store.boxes.children(stack.id)).length === 0) await store.boxes.delete(projectId, stack.id);
}
