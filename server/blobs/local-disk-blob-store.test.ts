import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { chmod, mkdir, readdir, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FILE_MODE, FOLDER_MODE, LocalDiskBlobStore, TEMPORARY_PREFIX } from './local-disk-blob-store.ts';
import { blobStoreConformance } from './blob-store.conformance.ts';

/** Every folder a test makes, removed at the end. */
const made: string[] = [];
const scratch = (prefix: string) => {
  const path = mkdtempSync(join(tmpdir(), prefix));
  made.push(path);
  return path;
};
afterAll(() => {
  for (const path of made) rmSync(path, { recursive: true, force: true });
});

const temporaryFiles = async (root: string) => (await readdir(root, { recursive: true })).filter((name) => name.split(sep).pop()!.startsWith(TEMPORARY_PREFIX));

blobStoreConformance('local disk', async () => {
  const root = scratch('blobs-');
  return {
    store: new LocalDiskBlobStore(root),
    // Temporary files of failed writes must not stay behind.
    leftovers: () => temporaryFiles(root),
    // A root where a file is: no folder can be made there.
    unusable: () => {
      const file = join(scratch('blobs-unusable-'), 'a-file');
      writeFileSync(file, 'not a folder');
      return new LocalDiskBlobStore(join(file, 'blobs'));
    },
  };
});

describe('local disk blob store', () => {
  const mode = async (path: string) => (await stat(path)).mode & 0o777;
  const umask = process.umask();
  afterEach(() => {
    process.umask(umask);
  });

  // Blobs were once made with the umask's modes (0644 files, 0755 folders), readable by every local user.
  it.each([
    ['000', 0o000],
    ['022', 0o022],
    ['277', 0o277],
  ])('makes blobs 0600 and their folders 0700 under umask %s', async (_label, mask) => {
    process.umask(mask);
    const root = join(scratch('blobs-modes-'), 'blobs');
    const store = new LocalDiskBlobStore(root);
    await store.write('projects/p/files/written', Readable.from([Buffer.from('bytes')]), { expectedSize: 5 });
    // A write under way is never readable by others either (its exact mode is set before it becomes the blob).
    let underWay!: () => void;
    const arrived = new Promise<void>((resolve) => (underWay = resolve));
    const source = new Readable({ read() {} });
    const pending = store.write('projects/p/files/pending', source, { expectedSize: 2, onProgress: () => underWay() });
    source.push(Buffer.from('a'));
    await arrived;
    const [temporary] = await temporaryFiles(root);
    expect((await mode(join(root, temporary))) & ~FILE_MODE).toBe(0);
    source.push(Buffer.from('b'));
    source.push(null);
    await pending;
    const rendition = join(scratch('ffmpeg-scratch-'), 'out.m4a');
    await writeFile(rendition, 'rendition', { mode: 0o644 });
    await chmod(rendition, 0o644);
    await store.adopt('projects/p/renditions/b/compressed', rendition);

    for (const key of ['projects/p/files/written', 'projects/p/files/pending', 'projects/p/renditions/b/compressed']) {
      expect(await mode(join(root, key)), key).toBe(FILE_MODE);
    }
    for (const folder of ['', 'projects', 'projects/p', 'projects/p/files', 'projects/p/renditions', 'projects/p/renditions/b']) {
      expect(await mode(join(root, folder)), folder || 'the root').toBe(FOLDER_MODE);
    }
  });

  it('closes up a root an older version made with the umask\'s mode', async () => {
    const root = scratch('blobs-old-');
    await chmod(root, 0o755);
    await new LocalDiskBlobStore(root).write('a/b', Readable.from([Buffer.from('x')]), { expectedSize: 1 });
    expect(await mode(root)).toBe(FOLDER_MODE);
  });

  it('sweeps a temporary file a crashed write left once it is older than the cutoff, and keeps a younger one', async () => {
    const root = scratch('blobs-crash-');
    const store = new LocalDiskBlobStore(root);
    await store.write('projects/p/files/kept', Readable.from([Buffer.from('kept')]), { expectedSize: 4 });
    // What a process killed mid-write leaves: a temporary file beside where its blob would have gone.
    const folder = dirname(join(root, 'projects/p/files/kept'));
    const old = join(folder, `${TEMPORARY_PREFIX}0123456789abcdef`);
    const young = join(folder, `${TEMPORARY_PREFIX}fedcba9876543210`);
    await writeFile(old, Buffer.alloc(1000));
    await writeFile(young, Buffer.alloc(1000));
    const tenMinutesAgo = new Date(Date.now() - 10 * 60_000);
    await utimes(old, tenMinutesAgo, tenMinutesAgo);
    await mkdir(join(root, 'empty'));

    expect(await store.sweepUnfinishedWrites(60_000)).toBe(1);
    expect((await temporaryFiles(root)).map((path) => relative(folder, join(root, path)))).toEqual([`${TEMPORARY_PREFIX}fedcba9876543210`]);
    expect(await store.stat('projects/p/files/kept')).toEqual({ size: 4 });
  });
});
