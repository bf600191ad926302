/**
 * The bench's `all-after-write` part. What it measures, and how, is its paragraph of bench/README.md's list of parts,
 * kept in all-after-write.md beside this file and written into the README by `npm run bench:readme`.
 */
import { Agent, request } from 'node:http';
import { createApiClient } from '../../generated/client.ts';
import type { Schemas } from '../../server/lib/api-types.ts';
import { openStore } from '../../server/repositories.ts';
import { analysedTake, makeBigProject } from '../../server/testing/studio-data.ts';
import { benchToken } from '../lib/accounts.ts';
import { cpuSeconds } from '../lib/proc.ts';
import { start } from '../lib/servers.ts';
import type { BenchPart, PartContext } from '../lib/part.ts';

async function run({ say, failures }: PartContext): Promise<void> {
  // The target: "GET /projects/:id/all, 10,000 boxes, right after a write: < 50 ms". One server, its project
  // made through the store (server/testing/studio-data.ts, as the studio part makes it); then rounds of one small
  // write through the API, then one GET /all timed from here (request sent to body read), then the same GET again,
  // which no write precedes. The writes alternate: a file renamed (a box changes), a folder created (a box is added).
  const boxes = Number(process.env.BENCH_ALL_BOXES ?? 10_000);
  const writes = Number(process.env.BENCH_ALL_WRITES ?? 30);
  const analysed = await analysedTake();
  const server = await start('server/main.ts', { VALIDATE_RESPONSES: 'false', PROCESSING: 'external' });
  const token = await benchToken(server);
  const api = createApiClient({ baseUrl: server.url + '/api/v1', token });
  const store = await openStore({ dataDir: server.dataDir });
  const user = (await store.users.findByEmail('bench@example.com'))!;
  const { projectId } = await makeBigProject(store, user.id, boxes, analysed);
  await store.close();
  const allUrl = `${server.url}/api/v1/projects/${projectId}/all`;
  const headers = { Authorization: `Bearer ${token}` };
  // node:http with a kept-alive connection, as the lightest client: what is timed is the server, not fetch's parsing.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const timedGet = () =>
    new Promise<{ ms: number; bytes: number }>((done, fail) => {
      const started = performance.now();
      const req = request(allUrl, { agent, headers }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => (res.statusCode === 200 ? done({ ms: performance.now() - started, bytes }) : fail(new Error(`GET /all answered ${res.statusCode}`))));
      });
      req.on('error', fail);
      req.end();
    });
  const first = await timedGet();
  const listed = (await (await fetch(allUrl, { headers })).json()) as Schemas['Box'][];
  const files = listed.filter((box) => box.object === 'file');
  const afterWrite: number[] = [];
  const cached: number[] = [];
  // The server's CPU time in each kind of GET, summed over the rounds: a figure the machine's other load changes less
  // than wall time (/proc counts in 10 ms ticks, hence the sum).
  const serverCpu = { afterWrite: 0, cached: 0 };
  const cpuOf = async (get: () => Promise<{ ms: number }>) => {
    const before = cpuSeconds(server.child.pid!);
    const { ms } = await get();
    return { ms, cpu: cpuSeconds(server.child.pid!) - before };
  };
  for (let round = 0; round < writes; round++) {
    if (round % 2 === 0) {
      const file = files[(round * 7919) % files.length];
      const renamed = await api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid: projectId, fileid: file.id } }, body: { name: `${file.name.replace(/ \(renamed \d+\)$/, '')} (renamed ${round})` } });
      if (!renamed.data) throw new Error('the rename failed');
    } else {
      const created = await api.POST('/projects/{projectid}/folders', { params: { path: { projectid: projectId } }, body: { name: `Folder after write ${round}` } });
      if (!created.data) throw new Error('the folder was not created');
    }
    const fresh = await cpuOf(timedGet);
    afterWrite.push(fresh.ms);
    serverCpu.afterWrite += fresh.cpu;
    const again = await cpuOf(timedGet);
    cached.push(again.ms);
    serverCpu.cached += again.cpu;
  }
  agent.destroy();
  await server.stop();
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  const percentile = (values: number[], p: number) => sorted(values)[Math.min(values.length - 1, Math.floor(values.length * p))];
  const median = percentile(afterWrite, 0.5);
  say(
    `GET /projects/:id/all, ${boxes.toLocaleString('en')} boxes (${(first.bytes / 1024 ** 2).toFixed(1)} MiB), ${writes} writes: right after a write median ${median.toFixed(1)} ms, ` +
      `p90 ${percentile(afterWrite, 0.9).toFixed(1)} ms; with no write before it median ${percentile(cached, 0.5).toFixed(1)} ms, p90 ${percentile(cached, 0.9).toFixed(1)} ms; the first GET ${first.ms.toFixed(1)} ms; ` +
      `server CPU per GET ${((serverCpu.afterWrite / writes) * 1000).toFixed(1)} ms right after a write, ${((serverCpu.cached / writes) * 1000).toFixed(1)} ms with no write before it`,
  );
  say(`GET /projects/:id/all right after a write, median: ${median.toFixed(1)} ms (target < 50 ms: ${median < 50 ? 'met' : 'MISSED'})`);
  if (median >= 50) failures.push(`GET /projects/:id/all right after a write: median ${median.toFixed(1)} ms, target < 50 ms`);
}

export const part: BenchPart = {
  name: 'all-after-write',
  title: '/all after a write',
  summary: 'GET /projects/:id/all of a project of 10,000 boxes (made through the store) right after a small write through the API (a file renamed, or a folder created), one request at a time: median and p90 (target median < 50 ms), beside the same request answered with no write before it.',
  readme: new URL('./all-after-write.md', import.meta.url),
  run,
};
