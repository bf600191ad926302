/**
 * Blobs as files under a root folder. A write streams into a temporary file
 * in the same folder, fsyncs it, renames it into place (atomic on POSIX) and
 * fsyncs the folder, so a blob is either absent or whole, even across a crash.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve, sep } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobTooLargeError, BlobTooShortError, type BlobInfo, type BlobStore, type WriteOptions } from './blob-store.ts';

const HEAD_BYTES = 16;

export class LocalDiskBlobStore implements BlobStore {
  private root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  private path(key: string): string {
    // Keys are made by the server, but a key must never reach outside the root.
    if (!/^[A-Za-z0-9_/-]+$/.test(key) || key.includes('..')) throw new Error(`Invalid blob key: ${key}`);
    const path = resolve(this.root, key);
    if (!path.startsWith(this.root + sep)) throw new Error(`Invalid blob key: ${key}`);
    return path;
  }

  async write(key: string, source: Readable, { expectedSize, inspectHead }: WriteOptions): Promise<BlobInfo> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    const temporary = join(dirname(target), `.tmp-${randomBytes(8).toString('hex')}`);
    let received = 0;
    let head: Buffer | null = inspectHead ? Buffer.alloc(0) : null;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        received += chunk.length;
        if (received > expectedSize) return done(new BlobTooLargeError(`more than the declared ${expectedSize} bytes`));
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
    try {
      await pipeline(source, counter, createWriteStream(temporary, { flags: 'wx', highWaterMark: 1 << 20 }));
      const file = await open(temporary, 'r+');
      try {
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temporary, target);
      await syncFolder(dirname(target));
      return { size: received };
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  async adopt(key: string, path: string): Promise<BlobInfo> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    const file = await open(path, 'r+');
    try {
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
}

async function syncFolder(folder: string) {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
