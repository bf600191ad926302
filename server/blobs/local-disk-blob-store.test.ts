import { mkdtempSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalDiskBlobStore } from './local-disk-blob-store.ts';
import { blobStoreConformance } from './blob-store.conformance.ts';

blobStoreConformance('local disk', async () => {
  const root = mkdtempSync(join(tmpdir(), 'blobs-'));
  return {
    store: new LocalDiskBlobStore(root),
    // Temporary files of failed writes must not stay behind.
    leftovers: async () => (await readdir(root, { recursive: true })).filter((name) => name.includes('.tmp-')),
  };
});
