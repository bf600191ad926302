/**
 * Which files a player shows, and how they group into tracks: the files of
 * its scope (the whole project, one folder, or a list of boxes, with
 * everything inside them) that are not trashed, not held by an upload
 * portal (inside a held folder), and whose bytes have arrived.
 * A stack is one track whose versions are its files; a file outside any
 * stack is a track of one version. With the `stacks` option off, a stack
 * shows only its most recent version (the interface on the player object: "false: only the most
 * recent versions").
 *
 * The one place this is decided: the listener's view, the listener
 * resolution (which files a listener may reach) and the old page all use it.
 */
import type { BoxRecord } from '../boxes/box-repository.ts';
import type { PlayerRecord } from '../players/player-repository.ts';

export interface PlayerTrack {
  /** The stack, or the file itself for a file outside any stack. */
  box: BoxRecord;
  /** The files, newest first (the last in the stack's order is its most recent version). */
  versions: BoxRecord[];
}

type Scope = Pick<PlayerRecord, 'folderId' | 'boxIds'> & { options: Pick<PlayerRecord['options'], 'stacks'> };

const shown = (box: BoxRecord) => box.kind === 'file' && !box.trashed && box.status !== 'awaiting-upload';

export function playerTrackGroups(player: Scope, boxes: BoxRecord[]): PlayerTrack[] {
  const byId = new Map(boxes.map((box) => [box.id, box]));
  const children = new Map<string, BoxRecord[]>();
  const topLevel: BoxRecord[] = [];
  for (const box of boxes) {
    if (box.parentId && byId.has(box.parentId)) {
      const list = children.get(box.parentId) ?? [];
      list.push(box);
      children.set(box.parentId, list);
    } else {
      topLevel.push(box);
    }
  }
  const ordered = (list: BoxRecord[]) => [...list].sort((a, b) => a.position - b.position || a.timeCreated - b.timeCreated);

  // What an upload portal holds (a held folder and all inside it) is in no player, whatever its scope, until a member moves it out.
  const isHeld = (box: BoxRecord) => {
    const passed = new Set<string>();
    for (let at: BoxRecord | undefined = box; at && !passed.has(at.id); at = at.parentId ? byId.get(at.parentId) : undefined) {
      if (at.held) return true;
      passed.add(at.id);
    }
    return false;
  };
  const roots = (
    player.folderId
      ? [byId.get(player.folderId)].filter((box): box is BoxRecord => !!box)
      : player.boxIds
        ? player.boxIds.map((id) => byId.get(id)).filter((box): box is BoxRecord => !!box)
        : ordered(topLevel)
  ).filter((box) => !isHeld(box));

  const tracks: PlayerTrack[] = [];
  const seen = new Set<string>();
  const visit = (box: BoxRecord) => {
    // A box listed twice in boxids, or a file named beside its stack, is still one track.
    if (box.trashed || box.held || seen.has(box.id)) return;
    seen.add(box.id);
    if (box.kind === 'file') {
      if (shown(box)) tracks.push({ box, versions: [box] });
      return;
    }
    const inside = ordered(children.get(box.id) ?? []);
    if (box.kind === 'stack') {
      const files = inside.filter(shown);
      for (const file of files) seen.add(file.id);
      if (files.length === 0) return;
      const newestFirst = files.reverse();
      tracks.push({ box, versions: player.options.stacks ? newestFirst : newestFirst.slice(0, 1) });
      return;
    }
    inside.forEach(visit);
  };
  roots.forEach(visit);
  return tracks;
}

/**
 * The files a player shows, as a flat list in page order (a stack's versions
 * oldest first, as the first page listed them).
 */
export function playerTracks(player: Scope, boxes: BoxRecord[]): BoxRecord[] {
  return playerTrackGroups(player, boxes).flatMap((track) => [...track.versions].reverse());
}
