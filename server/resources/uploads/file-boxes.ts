/**
 * Where a file uploaded by a project member lands, and the making of its
 * box and stack. createFileBox (uploads-service.ts), which every owner
 * upload path calls (requestUploadUrl, and the members' resumable uploads),
 * places files here, so that they all land alike. Uploads through a
 * player's portal do not come here: strangers' files are held until a
 * member files them.
 */
import type { Store } from '../../repositories.ts';
import type { BoxRecord, FileStatus } from '../boxes/box-repository.ts';
import { conflict, notFound } from '../../lib/problems.ts';
import { newBox } from '../boxes/boxes-service.ts';
import { sameName, stackNameFor, versionMarker, withoutExtension } from '../boxes/version-marker.ts';

export interface NewFile {
  projectId: string;
  /** What the request named: a folder or stack of the project, or nothing for the top level. */
  parentId?: string | null;
  name: string;
  mimeType: string;
  /** The declared size in bytes. */
  size: number;
  uploaderId: string;
  /** The request's own choice (UploadUrlRequest.autoStack); undefined leaves it to the uploader's account preference. */
  autoStack?: boolean;
  /** awaiting-upload (the default) while the bytes are still to come. */
  status?: FileStatus;
}

export interface PlacedFile {
  file: BoxRecord;
  /** The stack the file is in: every uploaded file lands in one. */
  stack: BoxRecord;
  /** True when the file joined a stack or file by the version marker of its name. */
  autoStacked: boolean;
}

/**
 * Makes the file box (and the stack it lands in) in `store`'s transaction,
 * which should also hold the quota check. Takes the project's row first, as
 * every box write does, so two uploads into one place cannot read the same
 * next position, nor both make a stack for the same name.
 *
 * Where it lands, from the interface on the files and upload operations: into the stack named by
 * parentid, as its newest version; otherwise into a new stack of its own, at
 * the top level or in the folder named by parentid, named after the file
 * without its extension (the studio's rules: "A stack that an upload makes is named
 * after the file without its extension, through the API too"). Unless
 * parentid is a stack, the file first tries to stack itself (the studio's rules): "a
 * file whose name, without its extension, ends in a version marker … joins
 * the stack or file whose name is the rest, as its newest version".
 */
export async function placeFileBox(store: Store, input: NewFile, now: number): Promise<PlacedFile> {
  const { projectId } = input;
  if (!(await store.boxes.lockProject(projectId))) throw notFound(`No project ${projectId} exists that you can see.`);
  const parent = input.parentId ? await store.boxes.get(projectId, input.parentId) : undefined;
  if (input.parentId && (!parent || parent.kind === 'file')) {
    throw conflict(`parentid ${input.parentId} is not a folder or stack of project ${projectId}.`);
  }
  let stack: BoxRecord | undefined = parent?.kind === 'stack' ? parent : undefined;
  let versionName: string | null = null;
  if (!stack && (await autoStacks(store, input))) {
    const joined = await versionTarget(store, projectId, parent?.id ?? null, input.name, now);
    if (joined) ({ stack, versionName } = joined);
  }
  const autoStacked = versionName !== null;
  if (!stack) {
    const parentId = parent?.id ?? null;
    stack = newBox({ projectId, kind: 'stack', name: stackNameFor(input.name), parentId, position: await store.boxes.nextPosition(projectId, parentId) }, now);
    await store.boxes.insert(stack);
  }
  const file = newBox(
    {
      projectId,
      kind: 'file',
      name: input.name,
      parentId: stack.id,
      position: await store.boxes.nextPosition(projectId, stack.id),
      versionName,
      status: input.status ?? 'awaiting-upload',
      size: input.size,
      mimeType: input.mimeType,
      uploaderId: input.uploaderId,
    },
    now,
  );
  await store.boxes.insert(file);
  return { file, stack, autoStacked };
}

/** The request's choice, else the uploader's account preference (on by default). */
async function autoStacks(store: Store, input: NewFile): Promise<boolean> {
  if (input.autoStack !== undefined) return input.autoStack;
  return (await store.users.get(input.uploaderId))?.autoStack ?? true;
}

/**
 * The stack a versioned name joins, among the boxes of one place (a folder,
 * or the top level), not trashed: first a stack named the rest; else a file
 * whose name without its extension is the rest, which becomes a new stack
 * in its place, named so, holding it; else a stack or file of the same
 * family, whose own name is the rest with another marker ("Night Drive v1"
 * when "Night Drive v2.wav" comes: the musician who numbers from v1 means
 * them as one track), which is then named the rest. Undefined when the name
 * has no version marker or its rest matches nothing. A stack whose name
 * still has the extension of its file ("Night Drive.wav", as uploads named
 * stacks before) counts as named without it. The first in the place's order wins.
 */
async function versionTarget(store: Store, projectId: string, placeId: string | null, fileName: string, now: number) {
  const marked = versionMarker(fileName);
  if (!marked) return undefined;
  const here = (await store.boxes.childrenIn(projectId, placeId)).filter((box) => !box.trashed);
  const named = (box: BoxRecord) => sameName(box.name, marked.rest) || sameName(withoutExtension(box.name), marked.rest);
  const sameFamily = (box: BoxRecord) => {
    const own = versionMarker(box.name);
    return own !== undefined && sameName(own.rest, marked.rest);
  };
  const stack = here.find((box) => box.kind === 'stack' && named(box));
  if (stack) return { stack, versionName: marked.marker };
  const file = here.find((box) => box.kind === 'file' && sameName(withoutExtension(box.name), marked.rest));
  if (file) return { stack: await stackInPlaceOf(store, file, withoutExtension(file.name), null, now), versionName: marked.marker };
  const kin = here.find((box) => (box.kind === 'stack' || box.kind === 'file') && sameFamily(box));
  if (!kin) return undefined;
  if (kin.kind === 'file') return { stack: await stackInPlaceOf(store, kin, marked.rest, versionMarker(kin.name)!.marker, now), versionName: marked.marker };
  // "Night Drive v1" (the stack the first upload made) becomes "Night Drive", and its versions that had no name are named by their markers.
  const renamed = { ...kin, name: marked.rest, timeModified: now };
  await store.boxes.save(renamed);
  for (const version of await store.boxes.childrenIn(projectId, kin.id)) {
    const own = version.kind === 'file' && version.versionName === null ? versionMarker(version.name) : undefined;
    if (own && sameName(own.rest, marked.rest)) await store.boxes.save({ ...version, versionName: own.marker, timeModified: now });
  }
  return { stack: renamed, versionName: marked.marker };
}

/** A new stack named `name` in `file`'s place, holding it as its first version (named `versionName`). */
async function stackInPlaceOf(store: Store, file: BoxRecord, name: string, versionName: string | null, now: number): Promise<BoxRecord> {
  const made = newBox({ projectId: file.projectId, kind: 'stack', name, parentId: file.parentId, position: file.position }, now);
  await store.boxes.insert(made);
  await store.boxes.save({ ...file, parentId: made.id, position: 0, versionName, timeModified: now });
  return made;
}
