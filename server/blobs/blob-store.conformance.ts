/**
 * The blob store's conformance suite, which every backend runs unchanged
 * (local disk today; S3 later), in the manner of tus-node-server's stores.
 */
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { BlobTooLargeError, BlobTooShortError, type BlobStore } from './blob-store.ts';

const bytes = (content: string) => Readable.from([Buffer.from(content)]);

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

export function blobStoreConformance(name: string, make: () => Promise<{ store: BlobStore; leftovers: () => Promise<string[]> }>) {
  describe(`blob store: ${name}`, () => {
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

    it('refuses keys that could reach outside the store', async () => {
      const { store } = await make();
      await expect(store.write('../escape', bytes('x'), { expectedSize: 1 })).rejects.toThrow(/Invalid blob key/);
    });
  });
}
