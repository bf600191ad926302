/**
 * Blobs as files under a root folder. A write streams into a temporary file
 * in the same folder, fsyncs it, renames it into place (atomic on POSIX) and
 * fsyncs the folder, so a blob is either absent or whole, even across a crash.
 * A crash mid-write leaves the temporary file; sweepUnfinishedWrites removes
 * it once nothing has written to it for long enough.
 *
 * Blobs are the users' files: they are made readable by the server's user
 * alone (files 0600, folders 0700), set outright so the umask cannot widen
 * (or narrow) them.
 */
import { constants, createReadStream, createWriteStream, type Dirent } from 'node:fs';
import { access, chmod, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobStoreUnavailableError, type BlobInfo, type BlobStore, type WriteOptions } from './blob-store.ts';
import { checkedBytes, checkKey, checkPrefix } from './byte-checks.ts';

export const FILE_MODE = 0o600;
export const FOLDER_MODE = 0o700;
/** How temporary files start; blob keys cannot contain a dot, so no key can ever name one. */
export const TEMPORARY_PREFIX = '.tmp-';

export class LocalDiskBlobStore implements BlobStore {
  private root: string;
  private rootReady: Promise<void> | undefined;

  constructor(root: string) {
    this.root = resolve(root);
  }

  private path(key: string): string {
    const path = resolve(this.root, checkKey(key));
    if (!path.startsWith(this.root + sep)) throw new Error(`Invalid blob key: ${key}`);
    return path;
  }

  /** Makes the root 0700 once, also when an older version made it with the umask's mode. */
  private ensureRoot(): Promise<void> {
    this.rootReady ??= (async () => {
      await mkdir(this.root, { recursive: true, mode: FOLDER_MODE });
      await chmod(this.root, FOLDER_MODE);
    })();
    return this.rootReady;
  }

  /** Makes `folder` and the folders above it that are missing, each 0700 whatever the umask. */
  private async ensureFolder(folder: string): Promise<void> {
    await this.ensureRoot();
    const first = await mkdir(folder, { recursive: true, mode: FOLDER_MODE });
    if (first === undefined) return;
    // mkdir's mode passes through the umask; set it outright on every folder it made.
    for (let current = folder; ; current = dirname(current)) {
      await chmod(current, FOLDER_MODE);
      if (current === first || current === dirname(current)) break;
    }
  }

  async write(key: string, source: Readable, { expectedSize, inspectHead, onProgress, signal, beforeCommit }: WriteOptions): Promise<BlobInfo> {
    const target = this.path(key);
    await this.ensureFolder(dirname(target));
    const temporary = join(dirname(target), `${TEMPORARY_PREFIX}${randomBytes(8).toString('hex')}`);
    const counter = checkedBytes({ expectedSize, inspectHead, onProgress });
    try {
      signal?.throwIfAborted();
      // flush: fsync before the file is closed, which pipeline waits for.
      await pipeline(source, counter, createWriteStream(temporary, { flags: 'wx', mode: FILE_MODE, flush: true, highWaterMark: 1 << 20 }), { signal });
      // The mode given at creation passes through the umask (never wider, perhaps narrower); make it exact.
      await chmod(temporary, FILE_MODE);
      await beforeCommit?.();
      signal?.throwIfAborted();
      await rename(temporary, target);
      await syncFolder(dirname(target));
      return { size: counter.received };
    } catch (error) {
      await rm(temporary, { force: true });
      // pipeline rejects with an AbortError of its own; the caller gave the reason it wants to see.
      if (signal?.aborted) throw signal.reason;
      throw error;
    }
  }

  async adopt(key: string, path: string): Promise<BlobInfo> {
    const target = this.path(key);
    await this.ensureFolder(dirname(target));
    const file = await open(path, 'r+');
    try {
      // ffmpeg made it with the umask's mode.
      await file.chmod(FILE_MODE);
      await file.sync();
    } finally {
      await file.close();
    }
    try {
      await rename(path, target);
    } catch (error) {
      // On another file system a rename cannot work; copy it in the usual way.
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      const size = (await stat(path)).size;
      await this.write(key, createReadStream(path), { expectedSize: size });
      await rm(path, { force: true });
    }
    await syncFolder(dirname(target));
    return { size: (await stat(target)).size };
  }

  /** The root is a folder this process may read and write (made if missing, as a first write would). */
  async check(): Promise<void> {
    try {
      await mkdir(this.root, { recursive: true, mode: FOLDER_MODE });
      if (!(await stat(this.root)).isDirectory()) throw new Error('it is not a folder');
      await access(this.root, constants.R_OK | constants.W_OK | constants.X_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new BlobStoreUnavailableError(`Cannot use the folder ${this.root} for files: ${code ?? (error as Error).message}. Check that it is a folder the server's user may write (DATA_DIR).`, {
        cause: error,
      });
    }
  }

  async stat(key: string): Promise<BlobInfo | undefined> {
    try {
      return { size: (await stat(this.path(key))).size };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  read(key: string, range?: { start: number; end: number }): Readable {
    return createReadStream(this.path(key), { ...range, highWaterMark: 1 << 20 });
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async localFile(key: string): Promise<{ path: string; release(): Promise<void> }> {
    if (!(await this.stat(key))) throw new Error(`No blob ${key}`);
    // The blob already is a file; nothing to copy and nothing to clean up.
    return { path: this.path(key), release: async () => {} };
  }

  async *list(prefix: string): AsyncIterable<string> {
    checkPrefix(prefix);
    // Only the folder the prefix ends in can hold matching keys.
    for await (const key of this.walk(prefix.slice(0, prefix.lastIndexOf('/') + 1))) {
      if (key.startsWith(prefix) && !basename(key).startsWith(TEMPORARY_PREFIX)) yield key;
    }
  }

  async sweepUnfinishedWrites(idleMs: number): Promise<number> {
    // mtimes come from the system clock; so does the cutoff (not the server's Clock, which tests move).
    const before = Date.now() - idleMs;
    let removed = 0;
    for await (const key of this.walk('')) {
      if (!basename(key).startsWith(TEMPORARY_PREFIX)) continue;
      const path = join(this.root, key);
      try {
        // Every write to the file moves its mtime, so an old one means no writer has touched it since.
        if ((await stat(path)).mtimeMs >= before) continue;
        await rm(path);
        removed++;
      } catch (error) {
        // Its write finished (renamed into place) or failed (removed) meanwhile.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    return removed;
  }

  /** Every file under the folder `relative` (empty, or ending in a slash), temporary ones too, as keys. */
  private async *walk(relative: string): AsyncGenerator<string> {
    let entries: Dirent[];
    try {
      entries = await readdir(join(this.root, relative), { withFileTypes: true });
    } catch (error) {
      // A folder that is not there (yet, or any more) holds nothing.
      if (['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '')) return;
      throw error;
    }
    for (const entry of entries) {
      const key = relative + entry.name;
      if (entry.isDirectory()) yield* this.walk(`${key}/`);
      else if (entry.isFile()) yield key;
    }
  }
}

async function syncFolder(folder: string) {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
