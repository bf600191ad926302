/** A box's JSON (the interface on the box object): what every answer that shows a box sends, List all files among them (box-listing.ts). */
import type { Schemas } from '../../lib/api-types.ts';
import type { BoxRecord } from './box-repository.ts';

export function boxJson(box: BoxRecord, children: BoxRecord[] = []): Schemas['Box'] {
  const common = { id: box.id, name: box.name, color: box.color, timeCreated: box.timeCreated, trashed: box.trashed };
  const parent = box.parentId ? { parentid: box.parentId } : {};
  if (box.kind === 'file') {
    return {
      ...common,
      object: 'file',
      // The interface on the box object: duration is present "only on audio file boxes".
      ...(box.duration !== null ? { duration: Math.round(box.duration * 100) / 100 } : {}),
      ...parent,
      ...(box.versionName !== null ? { versionName: box.versionName } : {}),
      status: box.status!,
      ...(box.status === 'failed' && box.statusReason ? { statusReason: box.statusReason } : {}),
      size: box.size!,
      mimeType: box.mimeType!,
      ...(box.audio ? { audio: box.audio } : {}),
      // Only files sent through an upload portal carry who sent them: members' uploads are theirs.
      ...(box.uploaderName ? { uploader: { name: box.uploaderName, ...(box.uploaderEmail ? { email: box.uploaderEmail } : {}) } } : {}),
    };
  }
  return {
    ...common,
    object: box.kind,
    // The interface on the box object: "each entry has the child's id and its label name"; in a stack the label is the version name.
    children: children.map((child) => ({ id: child.id, name: (box.kind === 'stack' && child.versionName) || child.name })),
    hidden: box.hidden,
    // Extension: the folder where an upload portal holds what strangers send, which no player shows.
    ...(box.held ? { held: true } : {}),
    ...parent,
  };
}
