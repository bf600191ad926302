/**
 * Where file bytes live, behind one small interface: local disk
 * (local-disk-blob-store.ts) or an S3-compatible bucket (s3-blob-store.ts).
 * Both pass the same conformance tests (blob-store.conformance.ts).
 */
import type { Readable } from 'node:stream';

export interface BlobInfo {
  size: number;
}

export interface WriteOptions {
  /** The exact number of bytes the source must yield. */
  expectedSize: number;
  /** Called with the first bytes (up to 16) before anything is kept; throwing refuses the write. */
  inspectHead?: (head: Buffer) => void;
  /** Called as bytes arrive from the source, with the number received so far. */
  onProgress?: (received: number) => void;
  /** Aborting it stops the write: nothing is kept, and the write rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Awaited once every byte is durably stored, just before the blob appears
   * under its key. Throwing (the writer lost its claim on the key) discards
   * the bytes and leaves an existing blob untouched. The blob appears right
   * after it resolves, so what it checked holds when the blob appears.
   */
  beforeCommit?: () => Promise<void>;
}

/** The source yielded more bytes than declared. */
export class BlobTooLargeError extends Error {}
/** The source ended before the declared number of bytes. */
export class BlobTooShortError extends Error {}
/** The configured store cannot be used (checked at start); the message says which and why, and what to check. */
export class BlobStoreUnavailableError extends Error {}

export interface BlobStore {
  /**
   * Streams `source` into the blob `key`. The blob appears whole, durably, or
   * not at all: on any error (too large, too short, the source failing or
   * being aborted) nothing is left behind and an existing blob is untouched.
   */
  write(key: string, source: Readable, options: WriteOptions): Promise<BlobInfo>;
  /**
   * Takes over a finished local file (a rendition ffmpeg wrote) as the blob,
   * durably and atomically. The file is moved where the backend can, so it
   * is gone afterwards either way.
   */
  adopt(key: string, path: string): Promise<BlobInfo>;
  /**
   * Checks cheaply that the store can be used now (S3: HeadBucket with these
   * keys; disk: the folder is there and writable), within `timeoutMs`.
   * Rejects with a BlobStoreUnavailableError that says what is wrong and what
   * to check. Run at start, and by GET /readyz.
   */
  check(timeoutMs?: number): Promise<void>;
  /** Size of a stored blob, or undefined when there is none. */
  stat(key: string): Promise<BlobInfo | undefined>;
  /** A stream of the blob's bytes, from `start` to `end` inclusive. */
  read(key: string, range?: { start: number; end: number }): Readable;
  /** Removes a blob; removing a missing blob is not an error. */
  delete(key: string): Promise<void>;
  /**
   * A path on local disk holding the blob's bytes, for tools that need a
   * seekable file (ffmpeg, ffprobe). A remote backend copies the blob to a
   * temporary file; `release` removes what it made. The file must not be changed.
   */
  localFile(key: string): Promise<{ path: string; release(): Promise<void> }>;
  /**
   * The keys of the stored blobs that start with `prefix` (a plain string
   * prefix, as S3 lists), in no particular order. Writes under way or cut
   * off are not blobs and are not listed.
   */
  list(prefix: string): AsyncIterable<string>;
  /**
   * Removes what writes cut off by a crash left behind (temporary files on
   * disk; incomplete multipart uploads on S3): those nothing has written to
   * for `idleMs`, by the backend's own clock (the one that stamps them). A
   * write under way keeps writing, so it is removed only if it stalled that
   * long; it then fails and keeps nothing. Answers how many were removed.
   */
  sweepUnfinishedWrites(idleMs: number): Promise<number>;
  /**
   * Only for backends that serve bytes themselves (S3): a URL that reads the
   * blob straight from the backend, without this server, with Range and
   * ETag, answered with exactly this Content-Type, Content-Disposition and
   * Cache-Control, which its signature binds. It works from `now` for
   * `ttlSeconds`, until the `expires` answered (ms since the epoch).
   */
  presignedGet?(key: string, options: PresignedGetOptions): Promise<{ url: string; expires: number }>;
  /**
   * With `presignedGet`: the origin (scheme, host, port) its URLs start
   * with, such as http://127.0.0.1:7480 or https://bucket.s3.eu-west-1.amazonaws.com.
   * The player pages' Content-Security-Policy allows it for media, images
   * and fetches, and nothing else beyond their own origin.
   */
  directOrigin?: string;
}

export interface PresignedGetOptions {
  now: number;
  ttlSeconds: number;
  contentType: string;
  contentDisposition: string;
  cacheControl: string;
}
