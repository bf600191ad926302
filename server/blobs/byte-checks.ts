/**
 * What every blob store checks the same way, whatever its backend: which
 * keys it takes, and the bytes of a write (their count against the declared
 * size, the head inspection, the progress reports).
 */
import { Transform } from 'node:stream';
import { BlobTooLargeError, BlobTooShortError, type WriteOptions } from './blob-store.ts';

/** How many of the first bytes inspectHead is given. */
export const HEAD_BYTES = 16;

/** Segments of letters, digits, - and _, joined by single slashes: no dot, so no "..", and nothing that names a folder. */
const KEY = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/;
/** A key's beginning: whole segments, each with its slash, then perhaps the beginning of one more. */
const PREFIX = /^([A-Za-z0-9_-]+\/)*[A-Za-z0-9_-]*$/;

/**
 * Keys are made by the server (keys.ts), but a key must never reach outside
 * the store: not out of the root folder on disk, nor to another object of
 * the bucket. Answers the key, or throws.
 */
export function checkKey(key: string): string {
  if (!KEY.test(key)) throw new Error(`Invalid blob key: ${key}`);
  return key;
}

/** The same, for a prefix to list under ('' lists everything). */
export function checkPrefix(prefix: string): string {
  if (!PREFIX.test(prefix)) throw new Error(`Invalid blob key prefix: ${prefix}`);
  return prefix;
}

/**
 * A pass-through that counts the bytes of a write: it fails with
 * BlobTooLargeError as soon as they pass `expectedSize`, and with
 * BlobTooShortError if they end before; it reports progress, and hands the
 * first HEAD_BYTES to `inspectHead` before passing any byte on, so that a
 * refused head is never stored.
 */
export function checkedBytes({ expectedSize, inspectHead, onProgress }: Pick<WriteOptions, 'expectedSize' | 'inspectHead' | 'onProgress'>): Transform & { readonly received: number } {
  let received = 0;
  let head: Buffer | null = inspectHead ? Buffer.alloc(0) : null;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      received += chunk.length;
      if (received > expectedSize) return done(new BlobTooLargeError(`more than the declared ${expectedSize} bytes`));
      onProgress?.(received);
      if (head !== null) {
        head = Buffer.concat([head, chunk.subarray(0, HEAD_BYTES - head.length)]);
        if (head.length >= Math.min(HEAD_BYTES, expectedSize)) {
          const inspected = head;
          head = null;
          try {
            inspectHead!(inspected);
          } catch (error) {
            return done(error as Error);
          }
        }
      }
      done(null, chunk);
    },
    flush(done) {
      if (received < expectedSize) return done(new BlobTooShortError(`${received} of the declared ${expectedSize} bytes`));
      if (head !== null) {
        try {
          inspectHead!(head);
        } catch (error) {
          return done(error as Error);
        }
      }
      done();
    },
  });
  return Object.defineProperty(counter, 'received', { get: () => received }) as Transform & { readonly received: number };
}
