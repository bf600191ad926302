/**
 * A project's boxes as the page shows them: a tree of folders, stacks and
 * files, flattened into the rows that are open, sorted by the project's
 * `sortBy`. Pure functions over the answers of the API, no DOM.
 *
 * Every upload lands in a stack (files.yaml, requestUploadUrl: "Every uploaded
 * file lands in a stack"), so most tracks are stacks of one version: such a
 * stack is shown as its file (one row, the file's name), and a stack of two
 * or more versions as a stack that opens on its versions.
 */
import type { Box, FileBox, Schemas } from '../api.ts';

export type FolderBox = Schemas['FolderBox'];
export type StackBox = Schemas['StackBox'];
export type SortBy = Schemas['SortBy'];
export type Criterion = NonNullable<SortBy['criterion']>;

/** The interface's `sortBy` criteria (players.yaml SortBy), with the words the page shows. */
export const CRITERIA: Array<[Criterion, string]> = [
  ['custom', 'Custom order'],
  ['name', 'Name'],
  ['duration', 'Duration'],
  ['size', 'Size'],
  ['bitDepth', 'Bit depth'],
  ['sampleRate', 'Sample rate'],
  ['bitRate', 'Bit rate'],
  ['channels', 'Channels'],
  ['lufs', 'Loudness (LUFS)'],
  ['timeModified', 'Last change'],
  ['timeCreated', 'Date added'],
  ['kind', 'Kind'],
];

export interface Boxes {
  byId: Map<string, Box>;
  /** The top level, in the API's order (folders, then stacks, then files; oldest first). */
  top: string[];
}

export function boxesOf(list: Box[]): Boxes {
  const byId = new Map<string, Box>();
  for (const box of list) byId.set(box.id, box);
  const top = list.filter((box) => !box.parentid || !byId.has(box.parentid)).map((box) => box.id);
  return { byId, top };
}

/** The ids the tree names (parents, children) that the list lacks: hidden boxes, which *List all files* leaves out. */
export function missingIds(boxes: Boxes): string[] {
  const missing = new Set<string>();
  for (const box of boxes.byId.values()) {
    if (box.parentid && !boxes.byId.has(box.parentid)) missing.add(box.parentid);
    if (box.object !== 'file') for (const child of box.children) if (!boxes.byId.has(child.id)) missing.add(child.id);
  }
  return [...missing];
}

export type RowKind = 'folder' | 'stack' | 'file';

export interface Row {
  key: string;
  kind: RowKind;
  depth: number;
  /** The box the row names: the folder, the stack, or the file. */
  box: Box;
  /** A file row: the file. */
  file?: FileBox;
  /** The stack the file row is a version of (a single-version stack shown as its file, or an open stack's version). */
  stack?: StackBox;
  /** A version row inside an open stack of several versions. */
  version?: { index: number; count: number };
  /** For folders and stacks of several versions: how many rows it holds, open or not. */
  count?: number;
}

const childrenOf = (boxes: Boxes, box: FolderBox | StackBox, trashed: boolean) =>
  box.children.map((child) => boxes.byId.get(child.id)).filter((child): child is Box => !!child && child.trashed === trashed);

/** The files of a stack that are not trashed, oldest version first. */
export function versionsOf(boxes: Boxes, stack: StackBox): FileBox[] {
  return childrenOf(boxes, stack, false).filter((child): child is FileBox => child.object === 'file');
}

/** The file a box stands for when sorted or played: itself, or the newest version of a stack. */
export function representative(boxes: Boxes, box: Box): FileBox | undefined {
  if (box.object === 'file') return box;
  if (box.object === 'stack') return versionsOf(boxes, box).at(-1);
  return undefined;
}

function sortKey(boxes: Boxes, box: Box, criterion: Criterion): string | number | undefined {
  const file = representative(boxes, box);
  const audio = file?.audio;
  switch (criterion) {
    case 'name':
      return displayName(boxes, box).toLocaleLowerCase();
    case 'duration':
      return file?.duration;
    case 'size':
      return file?.size;
    case 'bitDepth':
      return audio?.bitDepth;
    case 'sampleRate':
      return audio?.sampleRate;
    case 'bitRate':
      return audio?.bitRate;
    case 'channels':
      return audio?.channels;
    case 'lufs':
      return audio?.loudness.integratedLufs;
    // Boxes carry no time of change; the time a version was added is the last change a track has here.
    case 'timeModified':
      return file?.timeCreated ?? box.timeCreated;
    case 'timeCreated':
      return box.timeCreated;
    case 'kind':
      return file ? `${file.mimeType} ${displayName(boxes, box).toLocaleLowerCase()}` : '';
    default:
      return undefined;
  }
}

/** Siblings in the order `sortBy` asks: folders first, then the rest; custom keeps the API's order; unknown values last. */
export function sortSiblings(boxes: Boxes, ids: Box[], sortBy: SortBy | undefined): Box[] {
  const criterion = sortBy?.criterion ?? 'custom';
  const direction = sortBy?.ascending === false ? -1 : 1;
  const folders = ids.filter((box) => box.object === 'folder');
  const rest = ids.filter((box) => box.object !== 'folder');
  if (criterion === 'custom') return [...folders, ...rest];
  const byName = (a: Box, b: Box) => a.name.localeCompare(b.name, undefined, { numeric: true });
  const compare = (a: Box, b: Box) => {
    const ka = sortKey(boxes, a, criterion);
    const kb = sortKey(boxes, b, criterion);
    if (ka === undefined && kb === undefined) return byName(a, b);
    if (ka === undefined) return 1;
    if (kb === undefined) return -1;
    const order = typeof ka === 'number' && typeof kb === 'number' ? ka - kb : String(ka).localeCompare(String(kb), undefined, { numeric: true });
    return order === 0 ? byName(a, b) : order * direction;
  };
  return [...[...folders].sort((a, b) => byName(a, b) * direction), ...[...rest].sort(compare)];
}

/** The name a row shows: a stack of one version by its file's name (what was uploaded), anything else by its own. */
export function displayName(boxes: Boxes, box: Box): string {
  if (box.object === 'stack') {
    const versions = versionsOf(boxes, box);
    if (versions.length === 1) return versions[0].name;
  }
  return box.name;
}

/**
 * The rows that show, depth first: the top level, and the inside of every
 * folder and stack in `open`. Trashed boxes are left out (the Trash view
 * lists them), and so are stacks with no version left outside the trash.
 */
export function visibleRows(boxes: Boxes, open: ReadonlySet<string>, sortBy: SortBy | undefined): Row[] {
  const rows: Row[] = [];
  const walk = (list: Box[], depth: number) => {
    for (const box of sortSiblings(boxes, list, sortBy)) {
      if (box.trashed) continue;
      if (box.object === 'file') {
        rows.push({ key: box.id, kind: 'file', depth, box, file: box });
      } else if (box.object === 'stack') {
        const versions = versionsOf(boxes, box);
        if (versions.length === 0) continue;
        if (versions.length === 1) {
          rows.push({ key: box.id, kind: 'file', depth, box, file: versions[0], stack: box });
          continue;
        }
        rows.push({ key: box.id, kind: 'stack', depth, box, stack: box, count: versions.length });
        if (open.has(box.id)) {
          versions.forEach((file, index) => {
            rows.push({ key: file.id, kind: 'file', depth: depth + 1, box: file, file, stack: box, version: { index, count: versions.length } });
          });
        }
      } else {
        const children = childrenOf(boxes, box, false);
        rows.push({ key: box.id, kind: 'folder', depth, box, count: children.length });
        if (open.has(box.id)) walk(children, depth + 1);
      }
    }
  };
  walk(
    boxes.top.map((id) => boxes.byId.get(id)!).filter(Boolean),
    0,
  );
  return rows;
}

/**
 * The Trash: each trashed box whose parent is not trashed (a trashed folder
 * stands for its contents, which come back with it), newest first. A stack
 * of one version shows as its file.
 */
export function trashRows(boxes: Boxes): Row[] {
  const rows: Row[] = [];
  for (const box of boxes.byId.values()) {
    if (!box.trashed) continue;
    const parent = box.parentid ? boxes.byId.get(box.parentid) : undefined;
    if (parent?.trashed) continue;
    if (box.object === 'stack') {
      const files = box.children.map((child) => boxes.byId.get(child.id)).filter((child): child is FileBox => child?.object === 'file');
      if (files.length === 1) rows.push({ key: box.id, kind: 'file', depth: 0, box, file: files[0], stack: box });
      else rows.push({ key: box.id, kind: 'stack', depth: 0, box, stack: box, count: files.length });
    } else if (box.object === 'folder') rows.push({ key: box.id, kind: 'folder', depth: 0, box, count: box.children.length });
    else rows.push({ key: box.id, kind: 'file', depth: 0, box, file: box });
  }
  return rows.sort((a, b) => b.box.timeCreated - a.box.timeCreated);
}

/** The folders and stacks holding `id`, outermost first: what must be open for its row to show. */
export function ancestorsOf(boxes: Boxes, id: string): string[] {
  const chain: string[] = [];
  let box = boxes.byId.get(id);
  while (box?.parentid && boxes.byId.has(box.parentid)) {
    chain.unshift(box.parentid);
    box = boxes.byId.get(box.parentid);
  }
  return chain;
}

/** Every folder of the project that is not trashed, with its path ("Mixes / Old"), for "Move to…". */
export function folderChoices(boxes: Boxes): Array<{ id: string; path: string }> {
  const folders: Array<{ id: string; path: string }> = [];
  for (const box of boxes.byId.values()) {
    if (box.object !== 'folder' || box.trashed) continue;
    const path = [...ancestorsOf(boxes, box.id).map((id) => boxes.byId.get(id)!.name), box.name].join(' / ');
    folders.push({ id: box.id, path });
  }
  return folders.sort((a, b) => a.path.localeCompare(b.path));
}

/** Whether `id` is `ancestor` or lies inside it (a folder cannot move into itself). */
export function isInside(boxes: Boxes, id: string, ancestor: string): boolean {
  return id === ancestor || ancestorsOf(boxes, id).includes(ancestor);
}

/** A file still on its way: the page polls until it is analysed. */
export const isProcessing = (file: FileBox) => file.status === 'pending' || file.status === 'processing';
