/**
 * Which files a player shows: the files of its scope (the whole project, one
 * folder, or a list of boxes, with everything inside them) that are not
 * trashed and whose bytes have arrived. With the `stacks` option off, a stack
 * shows only its most recent version (interface 2.1: "false: only the most
 * recent versions").
 */
import type { BoxRecord } from '../server/resources/boxes/box-repository.ts';
import type { PlayerRecord } from '../server/resources/players/player-repository.ts';

export function playerTracks(player: PlayerRecord, boxes: BoxRecord[]): BoxRecord[] {
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

  const roots = player.folderId
    ? [byId.get(player.folderId)].filter((box): box is BoxRecord => !!box)
    : player.boxIds
      ? player.boxIds.map((id) => byId.get(id)).filter((box): box is BoxRecord => !!box)
      : ordered(topLevel);

  const tracks: BoxRecord[] = [];
  const visit = (box: BoxRecord) => {
    if (box.trashed) return;
    if (box.kind === 'file') {
      if (box.status !== 'awaiting-upload') tracks.push(box);
      return;
    }
    let inside = ordered(children.get(box.id) ?? []).filter((child) => !child.trashed);
    if (box.kind === 'stack') {
      inside = inside.filter((child) => child.kind === 'file' && child.status !== 'awaiting-upload');
      if (!player.options.stacks) inside = inside.slice(-1);
    }
    inside.forEach(visit);
  };
  roots.forEach(visit);
  return tracks;
}
