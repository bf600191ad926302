/**
 * The bench's `cluster-reads` part. What it measures, and how, is its paragraph of bench/README.md's list of parts,
 * kept in cluster-reads.md beside this file and written into the README by `npm run bench:readme`.
 */
import { randomBytes } from 'node:crypto';
import { freePort } from '../../contract-tests/support/ports.ts';
import { createTestDatabase } from '../../server/testing/databases.ts';
import { seed } from '../lib/accounts.ts';
import { ratio } from '../lib/figures.ts';
import { load } from '../lib/load.ts';
import { startNginx } from '../lib/nginx.ts';
import { cpuSeconds, machineBusySeconds } from '../lib/proc.ts';
import { start } from '../lib/servers.ts';
import { rounds, seconds } from '../lib/settings.ts';
import type { BenchPart, PartContext } from '../lib/part.ts';

async function run({ say }: PartContext): Promise<void> {
  // --- reads through nginx: 2 API processes against 1, on one PostgreSQL ---
  // Pinned: one process on core 1 alone; two processes on core 1 and core 0. This machine has 2 cores, so the second
  // process shares core 0 with the load generator (this process), nginx and PostgreSQL, which the first one never
  // does: the ratio is a floor of what a second core of its own would give.
  const db = await createTestDatabase('postgres');
  const env = { DATABASE_URL: db.databaseUrl!, SIGNING_SECRET: randomBytes(32).toString('hex'), PROCESSING: 'external' };
  const first = await start('server/main.ts', env, '1');
  const second = await start('server/main.ts', env, '0');
  const { token, playerid, projectid } = await seed(first);
  const balancers = {
    '1 process': await startNginx(await freePort(), [first.port], '0'),
    '2 processes': await startNginx(await freePort(), [first.port, second.port], '0'),
  };
  const headers = { Authorization: `Bearer ${token}` };
  const samples: Record<string, Array<{ rps: number; p99: number }>> = {};
  // Where the CPU went in each configuration: the API processes' own, and the whole machine's (both cores).
  const cpu: Record<string, { requests: number; api: number; machine: number; wall: number }> = {};
  const apiCpu = () => cpuSeconds(first.child.pid!) + cpuSeconds(second.child.pid!);
  for (let round = 0; round < rounds; round++) {
    for (const [name, balancer] of Object.entries(balancers)) {
      const before = { api: apiCpu(), machine: machineBusySeconds(), wall: performance.now() };
      const player = await load(`${balancer.url}/api/v1/players/${playerid}`, headers);
      const all = await load(`${balancer.url}/api/v1/projects/${projectid}/all`, headers);
      (samples[name] ??= []).push(player);
      (samples[`${name} all`] ??= []).push(all);
      const spent = (cpu[name] ??= { requests: 0, api: 0, machine: 0, wall: 0 });
      spent.requests += (player.rps + all.rps) * seconds;
      spent.api += apiCpu() - before.api;
      spent.machine += machineBusySeconds() - before.machine;
      spent.wall += (performance.now() - before.wall) / 1000;
    }
  }
  await Promise.all([...Object.values(balancers).map((balancer) => balancer.stop()), first.stop(), second.stop()]);
  await db.drop();
  const median = (runs: Array<{ rps: number; p99: number }>) => {
    const sorted = (key: 'rps' | 'p99') => runs.map((run) => run[key]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
    return { rps: sorted('rps'), p99: sorted('p99') };
  };
  const one = { player: median(samples['1 process']), all: median(samples['1 process all']) };
  const two = { player: median(samples['2 processes']), all: median(samples['2 processes all']) };
  say(`nginx over 1 API process (PostgreSQL): GET /players/:id ${one.player.rps.toFixed(0)} req/s, p99 ${one.player.p99} ms; GET /projects/:id/all ${one.all.rps.toFixed(0)} req/s, p99 ${one.all.p99} ms`);
  say(
    `nginx over 2 API processes: GET /players/:id ${two.player.rps.toFixed(0)} req/s (${ratio(two.player.rps, one.player.rps)}× 1), p99 ${two.player.p99} ms; ` +
      `GET /projects/:id/all ${two.all.rps.toFixed(0)} req/s (${ratio(two.all.rps, one.all.rps)}× 1), p99 ${two.all.p99} ms`,
  );
  // Whether a second process could add anything here: if the machine is already busy with one, it cannot; and if the
  // requests cost the API processes the same CPU each with two as with one, they do not get in each other's way.
  for (const [name, spent] of Object.entries(cpu)) {
    say(
      `  ${name}: the machine's 2 cores ${((100 * spent.machine) / (2 * spent.wall)).toFixed(0)} % busy; ` +
        `API processes ${((1000 * spent.api) / spent.requests).toFixed(2)} ms CPU per request (${((100 * spent.api) / spent.machine).toFixed(0)} % of the machine's CPU)`,
    );
  }
}

export const part: BenchPart = {
  name: 'cluster-reads',
  title: 'Reads through nginx',
  summary: 'GET /players/:id and /projects/:id/all through nginx over 1 and 2 API processes on one PostgreSQL, pinned.',
  readme: new URL('./cluster-reads.md', import.meta.url),
  run,
};
