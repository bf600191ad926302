/**
 * The bench's `idempotency` part. What it measures, and how, is its paragraph of bench/README.md's list of parts,
 * kept in idempotency.md beside this file and written into the README by `npm run bench:readme`.
 */
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { createApiClient } from '../../generated/client.ts';
import { benchToken } from '../lib/accounts.ts';
import { ratio } from '../lib/figures.ts';
import { start } from '../lib/servers.ts';
import { rounds, seconds } from '../lib/settings.ts';
import type { BenchPart, PartContext } from '../lib/part.ts';

/** A prefix of Idempotency-Keys no other run used. */
const ownKey = () => randomBytes(6).toString('hex');

async function run({ say }: PartContext): Promise<void> {
  // Issue 22: "the cost of Idempotency-Key on a create". One server, one project; the three kinds of run alternate for
  // the rounds, and each figure is the median. A new key per request is the cost partners pay (a claim, then the answer
  // sealed and stored, before it is sent); the same key every time measures a replay (one claim attempt, a read, an
  // unsealing), the answer a retry gets.
  const server = await start('server/main.ts', { VALIDATE_RESPONSES: 'false' });
  const token = await benchToken(server);
  const api = createApiClient({ baseUrl: server.url + '/api/v1', token });
  const { data: project } = await api.POST('/projects', { body: { name: 'Bench' } });
  const url = `${server.url}/api/v1/projects/${project!.id}/folders`;
  const body = JSON.stringify({ name: 'Bench folder' });
  const run = ownKey();
  let counter = 0;
  const create = async (key: 'none' | 'fresh' | 'same') => {
    const result = await autocannon({
      url,
      connections: 10,
      duration: seconds,
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body,
      requests: [
        {
          setupRequest: (request: autocannon.Request) =>
            key === 'none' ? request : { ...request, headers: { ...request.headers, 'Idempotency-Key': key === 'fresh' ? `"${run}-${counter++}"` : `"${run}-same"` } },
        },
      ],
    });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url} (${key}): ${result.non2xx} non-2xx responses, ${result.errors} errors`);
    return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
  };
  const runs: Record<'none' | 'fresh' | 'same', Array<{ rps: number; p50: number; p99: number }>> = { none: [], fresh: [], same: [] };
  for (let round = 0; round < rounds; round++) for (const key of ['none', 'fresh', 'same'] as const) runs[key].push(await create(key));
  await server.stop();
  const runMedian = (key: 'none' | 'fresh' | 'same', field: 'rps' | 'p50' | 'p99') => runs[key].map((one) => one[field]).sort((a, b) => a - b)[Math.floor(runs[key].length / 2)];
  say(
    `POST /projects/:id/folders (10 connections): without Idempotency-Key ${runMedian('none', 'rps').toFixed(0)} req/s, p50 ${runMedian('none', 'p50')} ms, p99 ${runMedian('none', 'p99')} ms; ` +
      `a new key each ${runMedian('fresh', 'rps').toFixed(0)} req/s (${ratio(runMedian('fresh', 'rps'), runMedian('none', 'rps'))}×), p50 ${runMedian('fresh', 'p50')} ms, p99 ${runMedian('fresh', 'p99')} ms; ` +
      `one key replayed ${runMedian('same', 'rps').toFixed(0)} req/s (${ratio(runMedian('same', 'rps'), runMedian('none', 'rps'))}×), p50 ${runMedian('same', 'p50')} ms, p99 ${runMedian('same', 'p99')} ms`,
  );
}

export const part: BenchPart = {
  name: 'idempotency',
  title: 'Idempotency',
  summary: 'a create (POST /projects/:id/folders, 10 connections) without Idempotency-Key, with a new key on every request, and the same key again and again (every answer a replay), in the same run against the same server.',
  readme: new URL('./idempotency.md', import.meta.url),
  run,
};
