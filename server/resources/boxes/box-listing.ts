/**
 * The answer of List all files as bytes, kept with where each box's JSON
 * lies in them and at which box version, so that the listing after a write
 * serialises only the boxes the write changed and copies the rest.
 *
 * A box's `version` changes with every change to what its JSON shows (its
 * own fields, and for a folder or stack its list of children: BoxRecord's
 * `version`), and it is read from the database on every rebuild. So a box's
 * JSON kept at version v is the JSON of any box read at version v, in this
 * process or any other sharing the database, and a rebuild reuses it only
 * when the database answers that same version.
 *
 * A rebuild reads the ids and versions of the project's boxes in the order
 * of the listing (one light query), then the whole rows of the boxes whose
 * JSON it does not hold at their version. The two reads are two statements:
 * a write may land between them. Every row of the second read must still be
 * at the version the first read gave, or the rebuild reads the whole project
 * in one statement instead, as every first listing does. So a listing always
 * shows the project as it was at one moment, never a mix of two.
 */
import type { Schemas } from '../../lib/api-types.ts';
import type { BoxRecord, BoxRepository } from './box-repository.ts';
import { boxJson } from './box-json.ts';

/** What the listing keeps of one box at one version: what its parent's list of children shows of it, and its JSON's length. */
interface ListedBox {
  version: number;
  parentId: string | null;
  position: number;
  name: string;
  versionName: string | null;
  /** The length in bytes of the box's JSON in the body; -1 for a hidden box, which the listing leaves out (but whose parent still names it). */
  bytes: number;
}

/** The listing of a project's boxes at one moment. */
export interface ProjectListing {
  /**
   * The answer's body: the bytes res.json sends for the list of boxes'
   * JSON (JSON.stringify with no spaces, which is the array's items' own
   * JSON.stringify, joined by commas, in brackets).
   */
  body: Buffer;
  /** Each box of the project at the version the body shows, by id, with where its JSON starts in the body (-1 if hidden): what the next rebuild reuses. */
  boxes: ReadonlyMap<string, { box: ListedBox; start: number }>;
  /** The list as objects (listingItems), once a request has asked for them. */
  items?: Schemas['Box'][];
}

/**
 * The list as objects, for pages and the response validator: parsed from
 * the body once per listing, so that res.json of them sends the body's
 * bytes (JSON.parse and JSON.stringify round-trip JSON's own output).
 */
export function listingItems(listing: ProjectListing): Schemas['Box'][] {
  listing.items ??= JSON.parse(listing.body.toString('utf8')) as Schemas['Box'][];
  return listing.items;
}

/**
 * Past this many boxes changed since the previous listing, one read of the
 * whole project costs less than the light read plus one read per box.
 */
const MOST_BOXES_READ_ONE_BY_ONE = 50;

/** What a rebuild reads of the project's boxes (BoxRepository). */
export type ListingReads = Pick<BoxRepository, 'listProject' | 'listVersions' | 'getMany'>;

/**
 * The listing of the project's boxes as they are now. With `previous` (a
 * listing of the same project, at any earlier box version), the JSON of
 * every box still at the version it shows is copied from its body, not
 * serialised again.
 */
export async function buildListing(boxes: ListingReads, projectId: string, previous?: ProjectListing): Promise<ProjectListing> {
  if (!previous) return fromRecords(await boxes.listProject(projectId));
  const listed = await boxes.listVersions(projectId);
  const changedVersion = new Map<string, number>();
  for (const { id, version } of listed) if (previous.boxes.get(id)?.box.version !== version) changedVersion.set(id, version);
  if (changedVersion.size > MOST_BOXES_READ_ONE_BY_ONE) return fromRecords(await boxes.listProject(projectId));
  const changed = new Map((await boxes.getMany(projectId, [...changedVersion.keys()])).map((box) => [box.id, box]));
  // A write landed between the two reads: the rows read second are newer than the list read first.
  if (changed.size !== changedVersion.size || [...changed.values()].some((box) => box.version !== changedVersion.get(box.id))) {
    return fromRecords(await boxes.listProject(projectId));
  }

  // A folder or stack changed: its children are read from the boxes as they are now. (A child's place, name or
  // version name changes its parent's version, so an unchanged parent's children are as its JSON shows them.)
  const changedContainers = new Set([...changed.values()].filter((box) => box.kind !== 'file').map((box) => box.id));
  const childrenOfChanged: Array<[string, Child]> = [];
  if (changedContainers.size > 0) {
    for (const { id } of listed) {
      const box = changed.get(id) ?? previous.boxes.get(id)!.box;
      if (box.parentId !== null && changedContainers.has(box.parentId)) childrenOfChanged.push([id, box]);
    }
  }
  const children = childrenByParent(childrenOfChanged);
  const fresh = new Map<string, { box: ListedBox; json: Buffer | null }>();
  for (const box of changed.values()) {
    const json = box.hidden ? null : Buffer.from(jsonOf(box, children.get(box.id)), 'utf8');
    fresh.set(box.id, { box: summary(box, json === null ? -1 : json.length), json });
  }

  // The new body: the previous body's runs of unchanged boxes, copied whole, and the changed boxes' JSON between them.
  const kept = new Map<string, { box: ListedBox; start: number }>();
  const pieces: Buffer[] = [OPEN];
  let end = OPEN.length;
  let items = 0;
  let run: { from: number; to: number } | undefined;
  const endRun = () => {
    if (run) pieces.push(previous.body.subarray(run.from, run.to));
    run = undefined;
  };
  for (const { id } of listed) {
    const changedBox = fresh.get(id);
    const before = changedBox ? undefined : previous.boxes.get(id)!;
    const box = changedBox ? changedBox.box : before!.box;
    if (box.bytes < 0) {
      kept.set(id, { box, start: -1 });
      continue;
    }
    const start = items === 0 ? end : end + COMMA.length;
    if (before && run && before.start === run.to + COMMA.length) {
      // It followed the box before it in the previous body too: the run goes on, with the comma between them.
      run.to = before.start + box.bytes;
    } else {
      endRun();
      if (items > 0) pieces.push(COMMA);
      if (before) run = { from: before.start, to: before.start + box.bytes };
      else pieces.push(changedBox!.json!);
    }
    kept.set(id, { box, start });
    end = start + box.bytes;
    items++;
  }
  endRun();
  pieces.push(CLOSE);
  return { body: Buffer.concat(pieces, end + CLOSE.length), boxes: kept };
}

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/** The listing of every box of the project, read in one statement, in the listing's order. */
function fromRecords(all: BoxRecord[]): ProjectListing {
  const children = childrenByParent(all.map((box): [string, Child] => [box.id, box]));
  const kept = new Map<string, { box: ListedBox; start: number }>();
  const items: string[] = [];
  let end = OPEN.length;
  for (const box of all) {
    const json = box.hidden ? null : jsonOf(box, children.get(box.id));
    if (json === null) {
      kept.set(box.id, { box: summary(box, -1), start: -1 });
      continue;
    }
    const bytes = Buffer.byteLength(json, 'utf8');
    const start = items.length === 0 ? end : end + COMMA.length;
    kept.set(box.id, { box: summary(box, bytes), start });
    items.push(json);
    end = start + bytes;
  }
  return { body: Buffer.from(`[${items.join(',')}]`, 'utf8'), boxes: kept };
}

/** What a parent's list of children shows of a child, and in which order (boxJson reads only the id, name and version name). */
type Child = Pick<BoxRecord, 'name' | 'versionName' | 'parentId' | 'position'>;

/** A box's JSON in the listing, which leaves hidden boxes out ("hidden boxes excluded"): the caller asks only for visible ones. */
function jsonOf(box: BoxRecord, children: Array<Child & { id: string }> | undefined): string {
  return JSON.stringify(boxJson(box, children as BoxRecord[] | undefined));
}

function summary(box: BoxRecord, bytes: number): ListedBox {
  return { version: box.version, parentId: box.parentId, position: box.position, name: box.name, versionName: box.versionName, bytes };
}

/** Each parent's children, in the order of BoxRepository.children: by position, then id. */
function childrenByParent(boxes: Array<[string, Child]>): Map<string, Array<Child & { id: string }>> {
  const children = new Map<string, Array<Child & { id: string }>>();
  for (const [id, box] of boxes) {
    if (!box.parentId) continue;
    const list = children.get(box.parentId) ?? [];
    list.push({ id, name: box.name, versionName: box.versionName, parentId: box.parentId, position: box.position });
    children.set(box.parentId, list);
  }
  for (const list of children.values()) list.sort((a, b) => a.position - b.position || (a.id < b.id ? -1 : 1));
  return children;
}
