/**
 * Keys derived from the server's signing secret, one per purpose, so that
 * no two uses of the secret (URL signatures, sealed secrets, paging
 * cursors, player sessions, invite links) share a key: HMAC-SHA256 of the
 * purpose's label under the secret. Each is derived once per secret.
 */
import { createHmac } from 'node:crypto';

const derived = new WeakMap<Buffer, Map<string, Buffer>>();

/** The key of `purpose` (a fixed label, such as 'audio-share paging cursor v2') under `secret`. */
export function derivedKey(secret: Buffer, purpose: string): Buffer {
  let keys = derived.get(secret);
  if (!keys) derived.set(secret, (keys = new Map()));
  let key = keys.get(purpose);
  if (!key) keys.set(purpose, (key = createHmac('sha256', secret).update(purpose).digest()));
  return key;
}
