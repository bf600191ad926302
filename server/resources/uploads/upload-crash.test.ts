/**
 * The lost upload claim, as it was reproduced: the real server, killed with
 * SIGKILL about 100 MB into a 400 MB PUT, then started again on the same
 * data. Before claims had a deadline, the file stayed `awaiting-upload` for
 * good, every retry of its URL got 409, and the 100 MB temporary file
 * stayed after every restart and sweep.
 */
import type { ChildProcess } from 'node:child_process';
import { childServerSetup, startServer } from '../../testing/child-server.ts';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { uploadHeaders } from '../../../generated/client.ts';
import { fileBlobKey } from '../../blobs/keys.ts';
import { backends, createTestDatabase } from '../../testing/databases.ts';
import { streamedPut, temporaryFiles } from '../../testing/uploads.ts';
import { until } from '../../testing/until.ts';

const MiB = 1024 * 1024;
const SIZE = 400 * MiB;
const CLAIM_SECONDS = 2;


/**
 * Sends a PUT's body, 1 MiB at a time, each chunk numbered so that bytes
 * stored out of place would change the hash; stops when the request ends.
 */
function sendBody(put: ReturnType<typeof streamedPut>, block: Buffer) {
  const hash = createHash('sha256');
  const sending = (async () => {
    for (let index = 0; index * MiB < SIZE; index++) {
      const chunk = Buffer.from(block);
      chunk.writeUInt32BE(index, 0);
      hash.update(chunk);
      if (!(await put.send(chunk))) return;
    }
    put.end();
  })();
  return { sending, digest: () => hash.digest('hex') };
}

async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk);
  return hash.digest('hex');
}

describe.each(backends)('a server killed mid-PUT, on %s', (backend) => {
  it('frees the upload after a restart: a retried PUT stores the whole file, and no temporary file is left', { timeout: 240_000 }, async () => {
    const database = await createTestDatabase(backend);
    const running: Array<{ child: ChildProcess; exited: Promise<unknown> }> = [];
    try {
      const { token, port, env } = await childServerSetup(database, 'crash@example.com', { UPLOAD_CLAIM_SECONDS: String(CLAIM_SECONDS) });
      const api = `http://127.0.0.1:${port}/api/v1`;
      const call = async (path: string, body: unknown) => {
        const response = await fetch(`${api}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
        expect(response.status, await response.clone().text()).toBe(200);
        return response.json();
      };
      const blobRoot = join(database.dataDir, 'blobs');
      const temporarySizes = async () => Promise.all((await temporaryFiles(blobRoot)).map(async (path) => (await stat(join(blobRoot, path))).size));

      let server = await startServer(env);
      running.push(server);
      const project = await call('/projects', { name: 'Crash' });
      const upload = await call(`/projects/${project.id}/files`, { name: 'big.bin', mimeType: 'application/octet-stream', size: SIZE });
      const block = randomBytes(MiB);

      const cut = streamedPut(upload.url, uploadHeaders(upload), SIZE);
      const cutBody = sendBody(cut, block);
      await until(async () => (await temporarySizes()).some((size) => size > 100 * MiB), 'the temporary file to pass 100 MB', 60_000);
      server.child.kill('SIGKILL');
      await server.exited;
      await cutBody.sending;
      expect(await cut.outcome).toHaveProperty('error');
      const [leftover] = await temporaryFiles(blobRoot);
      expect(leftover, 'the killed write left its temporary file').toBeDefined();

      // A restart must not remove a temporary file that a write in another process may still own;
      // this one is stale once nothing has written to it for a whole claim deadline.
      await until(async () => Date.now() - (await stat(join(blobRoot, leftover))).mtimeMs > CLAIM_SECONDS * 1000, 'the temporary file to go stale');
      server = await startServer(env);
      running.push(server);
      // The sweep at start removes it.
      await until(async () => (await temporaryFiles(blobRoot)).length === 0, 'the sweep at start to remove the temporary file');

      // The URL works again once the dead server's claim is stale (the sweep at start freed it, too).
      let expected = '';
      const stored = await until(
        async () => {
          const retry = streamedPut(upload.url, uploadHeaders(upload), SIZE);
          const body = sendBody(retry, block);
          const status = await Promise.race([retry.responseStarted, retry.outcome.then(() => 0)]);
          if (status !== 200) {
            // Refused before the body was read (409 while the claim was live): stop sending, try again.
            retry.cut();
            await body.sending;
            return undefined;
          }
          await body.sending;
          expected = body.digest();
          return retry.outcome;
        },
        'a retried PUT to succeed',
        60_000,
      );
      expect(stored).toMatchObject({ status: 200, body: { id: upload.boxid, status: 'ready', size: SIZE } });
      const file = await (await fetch(`${api}/projects/${project.id}/files/${upload.boxid}`, { headers: { Authorization: `Bearer ${token}` } })).json();
      expect(file.status).toBe('ready');
      const blob = join(blobRoot, fileBlobKey(project.id, upload.boxid));
      expect((await stat(blob)).size).toBe(SIZE);
      expect(await sha256OfFile(blob)).toBe(expected);
      expect(await temporaryFiles(blobRoot)).toEqual([]);
    } finally {
      for (const { child, exited } of running) {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await exited;
      }
      await database.drop();
    }
  });
});
