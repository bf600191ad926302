/**
 * Where file bytes live, behind one small interface. Local disk is the
 * backend today; an S3-compatible one can come later and must pass the same
 * conformance tests (blob-store.conformance.ts).
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
}

/** The source yielded more bytes than declared. */
export class BlobTooLargeError extends Error {}
/** The source ended before the declared number of bytes. */
export class BlobTooShortError extends Error {}

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
}
