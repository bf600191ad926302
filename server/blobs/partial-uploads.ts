/**
 * Where resumable (tus) uploads keep their bytes until they complete:
 * outside the blob store, under DATA_DIR, one file per upload and tus's
 * `<id>.json` record of it. Here, below the resources, so that what deletes
 * a whole project can remove the partial bytes of its uploads under way
 * without depending on the resource that receives them.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

/** The directory of the uploads strangers send through players' upload portals. */
export const portalUploadDir = (dataDir: string) => join(dataDir, 'portal-uploads');

/** Removes what tus keeps of an upload in `directory`: its partial bytes and its record of them. Missing files are no error. */
export async function removePartialUpload(directory: string, uploadId: string): Promise<void> {
  const path = join(directory, uploadId);
  await Promise.all([rm(path, { force: true }), rm(`${path}.json`, { force: true })]);
}
