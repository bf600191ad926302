/**
 * Migration 13: an unfinished portal upload takes the room of the bytes it
 * has, not of the length it declared (server/resources/portal/).
 *
 * - portal_uploads.room_bytes: what the upload takes in its portal's total
 *   and its owner's storage quota until it completes (then its size): the
 *   bytes stored so far, and while a request streams bytes to it, those that
 *   request announced. Uploads under way when this runs start at 0; their
 *   next PATCH claims what it brings.
 */
export function portalRoomSchema(bigint: string): string {
  return `
ALTER TABLE portal_uploads ADD COLUMN room_bytes ${bigint} NOT NULL DEFAULT 0;
`;
}
