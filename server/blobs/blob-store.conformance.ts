/**
 * The blob store's conformance suite, which every backend runs unchanged
 * (local disk today; S3 later), in the manner of tus-node-server's stores.
 */
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { BlobStoreUnavailableError, BlobTooLargeError, BlobTooShortError, type BlobStore, type WriteOptions } from './blob-store.ts';

const bytes = (content: string) => Readable.from([Buffer.from(content)]);

/**
 * A write whose source the test feeds by hand, as a slow client does. It is
 * under way (its first 5 bytes, "first", arrived) when this resolves.
 */
async function startWrite(store: BlobStore, key: string, expectedSize: number, options: Partial<WriteOptions> = {}) {
  const source = new Readable({ read() {} });
  let arrived!: () => void;
  const underWay = new Promise<void>((resolve) => (arrived = resolve));
  const writing = store.write(key, source, { ...options, expectedSize, onProgress: () => arrived() });
  source.push(Buffer.from('first'));
  await Promise.race([underWay, writing]);
  return { writing, send: (content: string) => source.push(Buffer.from(content)), end: () => source.push(null) };
}

/** Polls `check` until it answers something truthy (a count above 0), and answers that; fails after 5 s. */
async function eventually<T>(check: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const value = await check();
    if (value || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function listed(store: BlobStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of store.list(prefix)) keys.push(key);
  return keys.sort();
}

/** A source that yields some bytes, then fails, as a dropped connection does. */
function failingSource(first: string): Readable {
  return new Readable({
    read() {
      if (this.readableLength === 0 && !(this as { sent?: boolean }).sent) {
        (this as { sent?: boolean }).sent = true;
        this.push(Buffer.from(first));
        setTimeout(() => this.destroy(new Error('connection reset')), 5);
      }
    },
  });
}

/**
 * `make` gives a fresh store, what failed writes left behind in it, and a
 * store of the same backend that cannot be used (a bucket that is not there,
 * a folder that is a file).
 */
export function blobStoreConformance(name: string, make: () => Promise<{ store: BlobStore; leftovers: () => Promise<string[]>; unusable: () => BlobStore }>) {
  describe(`blob store: ${name}`, () => {
    it('passes its check when usable, and fails it with a BlobStoreUnavailableError saying why when not', async () => {
      const { store, unusable } = await make();
      await expect(store.check(5000)).resolves.toBeUndefined();
      const error = await unusable()
        .check(5000)
        .catch((error: unknown) => error);
      expect(error).toBeInstanceOf(BlobStoreUnavailableError);
      expect((error as Error).message).toMatch(/^Cannot use the /);
    });

    it('writes a blob of exactly the expected size, and reads it whole or by range', async () => {
      const { store } = await make();
      expect(await store.write('a/one', bytes('hello world'), { expectedSize: 11 })).toEqual({ size: 11 });
      expect(await store.stat('a/one')).toEqual({ size: 11 });
      expect(await text(store.read('a/one'))).toBe('hello world');
      expect(await text(store.read('a/one', { start: 6, end: 10 }))).toBe('world');
    });

    it('refuses a source longer than declared and keeps nothing', async () => {
      const { store, leftovers } = await make();
      await expect(store.write('a/long', bytes('too many bytes'), { expectedSize: 4 })).rejects.toBeInstanceOf(BlobTooLargeError);
      expect(await store.stat('a/long')).toBeUndefined();
      expect(await leftovers()).toEqual([]);
    });

    it('refuses a source shorter than declared and keeps nothing', async () => {
      const { store, leftovers } = await make();
      await expect(store.write('a/short', bytes('abc'), { expectedSize: 10 })).rejects.toBeInstanceOf(BlobTooShortError);
      expect(await store.stat('a/short')).toBeUndefined();
      expect(await leftovers()).toEqual([]);
    });

    it('keeps nothing when the source fails midway, and leaves an existing blob untouched', async () => {
      const { store, leftovers } = await make();
      await store.write('a/kept', bytes('original'), { expectedSize: 8 });
      await expect(store.write('a/kept', failingSource('repl'), { expectedSize: 8 })).rejects.toThrow('connection reset');
      expect(await text(store.read('a/kept'))).toBe('original');
      expect(await leftovers()).toEqual([]);
    });

    it('lets the head inspector refuse the bytes before anything is kept', async () => {
      const { store, leftovers } = await make();
      const inspected: string[] = [];
      const refuse = (head: Buffer) => {
        inspected.push(head.toString());
        throw new Error('not an image');
      };
      await expect(store.write('a/image', bytes('plain text, not an image'), { expectedSize: 24, inspectHead: refuse })).rejects.toThrow('not an image');
      expect(inspected).toEqual(['plain text, not ']);
      expect(await store.stat('a/image')).toBeUndefined();
      expect(await leftovers()).toEqual([]);
    });

    it('inspects the head of a blob shorter than the head size, and of an empty one', async () => {
      const { store } = await make();
      const heads: number[] = [];
      await store.write('a/tiny', bytes('abc'), { expectedSize: 3, inspectHead: (head) => heads.push(head.length) });
      await store.write('a/empty', Readable.from([]), { expectedSize: 0, inspectHead: (head) => heads.push(head.length) });
      expect(heads).toEqual([3, 0]);
      expect(await store.stat('a/empty')).toEqual({ size: 0 });
    });

    it('deletes a blob, and deleting a missing one is not an error', async () => {
      const { store } = await make();
      await store.write('a/gone', bytes('x'), { expectedSize: 1 });
      await store.delete('a/gone');
      await store.delete('a/gone');
      expect(await store.stat('a/gone')).toBeUndefined();
    });

    it('gives a local file with the blob\'s bytes, and refuses a missing blob', async () => {
      const { store } = await make();
      await store.write('a/local', bytes('on disk'), { expectedSize: 7 });
      const local = await store.localFile('a/local');
      await expect((await import('node:fs/promises')).readFile(local.path, 'utf8')).resolves.toBe('on disk');
      await local.release();
      await expect(store.localFile('a/missing')).rejects.toThrow();
    });

    it('adopts a finished local file as a blob', async () => {
      const { store } = await make();
      const { mkdtemp, writeFile, access } = await import('node:fs/promises');
      const { tmpdir } = await import('node:os');
      const { join } = await import('node:path');
      const file = join(await mkdtemp(join(tmpdir(), 'adopt-')), 'rendition.m4a');
      await writeFile(file, 'rendition bytes');
      expect(await store.adopt('a/adopted', file)).toEqual({ size: 15 });
      expect(await text(store.read('a/adopted'))).toBe('rendition bytes');
      await expect(access(file)).rejects.toThrow();
    });

    it('reports its progress as the bytes arrive', async () => {
      const { store } = await make();
      const progress: number[] = [];
      await store.write('a/progress', Readable.from([Buffer.from('ab'), Buffer.from('cde')]), { expectedSize: 5, onProgress: (received) => progress.push(received) });
      expect(progress).toEqual([2, 5]);
    });

    it('stops a write when its signal aborts, with the signal\'s reason, keeping nothing and leaving an existing blob untouched', async () => {
      const { store, leftovers } = await make();
      await store.write('a/kept', bytes('original'), { expectedSize: 8 });
      const controller = new AbortController();
      const under = await startWrite(store, 'a/kept', 8, { signal: controller.signal });
      const reason = new Error('claim lost');
      controller.abort(reason);
      await expect(under.writing).rejects.toBe(reason);
      expect(await text(store.read('a/kept'))).toBe('original');
      expect(await leftovers()).toEqual([]);
      await expect(store.write('a/never', bytes('x'), { expectedSize: 1, signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
      expect(await store.stat('a/never')).toBeUndefined();
    });

    it('awaits beforeCommit once every byte is stored, before the blob appears; throwing there keeps nothing', async () => {
      const { store, leftovers } = await make();
      await store.write('a/guarded', bytes('original'), { expectedSize: 8 });
      const seen: unknown[] = [];
      const refusal = new Error('claim lost');
      const refused = store.write('a/guarded', bytes('new'), {
        expectedSize: 3,
        beforeCommit: async () => {
          seen.push(await store.stat('a/guarded'));
          throw refusal;
        },
      });
      await expect(refused).rejects.toBe(refusal);
      // Called once, while the old blob was still the one stored.
      expect(seen).toEqual([{ size: 8 }]);
      expect(await text(store.read('a/guarded'))).toBe('original');
      expect(await leftovers()).toEqual([]);
      let calls = 0;
      await expect(store.write('a/short', bytes('ab'), { expectedSize: 3, beforeCommit: async () => void calls++ })).rejects.toBeInstanceOf(BlobTooShortError);
      expect(calls).toBe(0);
      await store.write('a/guarded', bytes('new'), { expectedSize: 3, beforeCommit: async () => void calls++ });
      expect(calls).toBe(1);
      expect(await text(store.read('a/guarded'))).toBe('new');
    });

    it('lists the keys that start with a prefix, and never a write under way', async () => {
      const { store } = await make();
      for (const key of ['p/one/a', 'p/one/b', 'p/two/c', 'p/onex/d', 'q/e']) await store.write(key, bytes('x'), { expectedSize: 1 });
      const under = await startWrite(store, 'p/one/pending', 10);
      expect(await listed(store, 'p/one/')).toEqual(['p/one/a', 'p/one/b']);
      expect(await listed(store, 'p/one')).toEqual(['p/one/a', 'p/one/b', 'p/onex/d']);
      expect(await listed(store, 'p/')).toEqual(['p/one/a', 'p/one/b', 'p/onex/d', 'p/two/c']);
      expect(await listed(store, '')).toEqual(['p/one/a', 'p/one/b', 'p/onex/d', 'p/two/c', 'q/e']);
      expect(await listed(store, 'nothing/')).toEqual([]);
      under.send('12345');
      under.end();
      await under.writing;
      expect(await listed(store, 'p/one/')).toEqual(['p/one/a', 'p/one/b', 'p/one/pending']);
    });

    it('sweeps what a cut-off write left once nothing wrote to it since the cutoff, and never a write written to since', async () => {
      const { store, leftovers } = await make();
      const live = await startWrite(store, 'a/live', 10);
      expect(await store.sweepUnfinishedWrites(60_000)).toBe(0);
      expect(await leftovers()).toHaveLength(1);
      live.send('12345');
      live.end();
      expect(await live.writing).toEqual({ size: 10 });
      expect(await text(store.read('a/live'))).toBe('first12345');

      const stalled = await startWrite(store, 'a/stalled', 10);
      // Once it has been idle for a millisecond, a sweep for writes idle that long takes it.
      expect(await eventually(() => store.sweepUnfinishedWrites(1))).toBe(1);
      expect(await leftovers()).toEqual([]);
      // Its writer comes back to find its bytes gone: the write fails and keeps nothing.
      stalled.send('12345');
      stalled.end();
      await expect(stalled.writing).rejects.toThrow();
      expect(await store.stat('a/stalled')).toBeUndefined();
      expect(await leftovers()).toEqual([]);
      // Stored blobs are never swept, however old.
      expect(await store.stat('a/live')).toEqual({ size: 10 });
    });

    it('refuses keys that could reach outside the store', async () => {
      const { store } = await make();
      await expect(store.write('../escape', bytes('x'), { expectedSize: 1 })).rejects.toThrow(/Invalid blob key/);
      await expect(listed(store, '../')).rejects.toThrow(/Invalid blob key/);
    });
  });
}
