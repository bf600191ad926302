/**
 * The portal's tus protocol surface, on SQLite and PostgreSQL: the lock
 * (waiting for it costs nothing, a HEAD takes none), what OPTIONS
 * advertises, the API's request validation on the tus routes, and no
 * cross-origin access. Every wait polls a condition with a deadline.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestServer, type Harness } from '../../testing/harness.ts';
import { backends } from '../../testing/databases.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { until } from '../../testing/until.ts';
import { portalUploadDir } from './portal-tus.ts';
import { EventLocker } from './portal-locker.ts';
import { headUpload, startPortalUpload, streamedPatch } from './portal-test-helpers.ts';

const OWNER = 'artist@example.com';

async function makePortal(h: Harness, upload: Schemas['UploadPortal'] = { enabled: true }) {
  const { api } = await h.as(OWNER);
  const { data, error } = await api.POST('/players', { body: { name: 'Stems', upload } });
  if (!data) throw new Error(`player not made: ${JSON.stringify(error)}`);
  return data;
}

describe('EventLocker', () => {
  it('hands the lock to the first waiter on unlock, asks the holder to release, and lets an aborted waiter go', async () => {
    const locker = new EventLocker();
    const first = locker.newLock('pup_a');
    let asked = 0;
    await first.lock(new AbortController().signal, () => {
      asked++;
    });
    const order: string[] = [];
    const second = locker.newLock('pup_a');
    const secondTaken = second.lock(new AbortController().signal, () => {}).then(() => order.push('second'));
    const quitter = new AbortController();
    const third = locker.newLock('pup_a').lock(quitter.signal, () => {});
    await until(() => locker.waiting('pup_a') === 2 && asked === 2, 'both waiters to queue and ask the holder');
    quitter.abort();
    await expect(third).rejects.toMatchObject({ status_code: 400 });
    expect(locker.waiting('pup_a')).toBe(1);
    expect(order).toEqual([]);
    await first.unlock();
    await secondTaken;
    expect(order).toEqual(['second']);
    // Another upload's lock is its own.
    await locker.newLock('pup_b').lock(new AbortController().signal, () => {});
    await second.unlock();
    await locker.newLock('pup_a').lock(new AbortController().signal, () => {});
  });

  it('gives up after its timeout', async () => {
    const locker = new EventLocker({ acquireLockTimeoutMs: 50 });
    await locker.newLock('pup_a').lock(new AbortController().signal, () => {});
    await expect(locker.newLock('pup_a').lock(new AbortController().signal, () => {})).rejects.toMatchObject({ status_code: 500 });
    expect(locker.waiting('pup_a')).toBe(0);
  });
});

describe.each(backends)('portal tus protocol on %s', (backend) => {
  const h = useTestServer(backend);

  it('answers 80 HEADs during a slow PATCH at once, for next to no CPU, and leaves the PATCH running', async () => {
    const player = await makePortal(h);
    const size = 1_000_000;
    const url = await startPortalUpload(h.server.apiUrl, player.id, { size, filename: 'stems.zip', filetype: 'application/zip', name: 'Sam' });
    const uploadId = url.split('/').pop()!;
    const patch = streamedPatch(url, 0, size);
    const head = Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(100_000 - 4, 1)]);
    await patch.send(head);
    await until(async () => (await stat(join(portalUploadDir(h.server.ctx.config.dataDir), uploadId))).size === head.length, 'the first bytes to reach the server');

    // The same requests to an idle upload first, so that what is measured is the lock, not the first run of the code.
    const idle = await startPortalUpload(h.server.apiUrl, player.id, { size: 10, filename: 'notes.txt', filetype: 'text/plain', name: 'Sam' });
    await Promise.all(Array.from({ length: 80 }, () => headUpload(idle)));
    const before = process.cpuUsage();
    const answers = await Promise.all(Array.from({ length: 80 }, () => headUpload(url)));
    const used = process.cpuUsage(before);
    for (const res of answers) {
      expect(res.status).toBe(200);
      expect(res.headers.get('upload-offset')).toBe(String(head.length));
    }
    // Today's @tus/server locker spins a setImmediate loop per waiter: seconds of CPU. Generous: 80 requests cost far less than this.
    expect((used.user + used.system) / 1e6).toBeLessThan(0.5);

    // The PATCH was not asked to let go: the rest of the file completes it.
    await patch.send(Buffer.alloc(size - head.length, 2));
    patch.end();
    expect(await patch.outcome).toMatchObject({ status: 204 });
  });
});
