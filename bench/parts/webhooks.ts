/**
 * The bench's `webhooks` part. What it measures, and how, is its paragraph of bench/README.md's list of parts,
 * kept in webhooks.md beside this file and written into the README by `npm run bench:readme`.
 */
import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createApiClient } from '../../generated/client.ts';
import { startReceiver } from '../../server/testing/webhook-receiver.ts';
import { benchToken } from '../lib/accounts.ts';
import { medianOf, ratio } from '../lib/figures.ts';
import { cpuSeconds } from '../lib/proc.ts';
import { running, serverArgs, serverNode, serverRoot, start } from '../lib/servers.ts';
import { rounds, seconds } from '../lib/settings.ts';
import type { BenchPart, PartContext } from '../lib/part.ts';

/** The server's default number of deliveries in flight (WEBHOOK_CONCURRENCY), which the bench's sender keeps too. */
const WEBHOOK_CONCURRENCY_DEFAULT = 16;

/** bench/baselines/bare-sender.ts on core 1: `count` signed POSTs of `body` to `url`; answers its deliveries a second. */
async function bareSenderRate(url: string, body: string, count: number): Promise<number> {
  const child = spawn('taskset', ['-c', '1', serverNode, ...serverArgs('bench/baselines/bare-sender.ts')], {
    cwd: serverRoot,
    env: { ...process.env, BENCH_URL: url, BENCH_BODY: body, BENCH_COUNT: String(count), BENCH_CONCURRENCY: String(WEBHOOK_CONCURRENCY_DEFAULT) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  if (code !== 0) throw new Error(`bench/baselines/bare-sender.ts exited with ${code}`);
  return (JSON.parse(out) as { perSecond: number }).perSecond;
}

async function run({ say, failures }: PartContext): Promise<void> {
  // --- webhooks: first-attempt latency, and deliveries per second on one core ---
  spawnSync('taskset', ['-pc', '0', String(process.pid)]);
  const receiver = await startReceiver();
  const hooks = { WEBHOOK_ALLOW_PRIVATE: 'true', PROCESSING: 'external' };
  const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))];

  // First attempts: each change is made alone, and timed from the moment its request is sent (so the figure bounds the
  // time after the commit from above: the delivery may leave while the answer is still on its way) to its arrival.
  const server = await start('server/main.ts', hooks);
  const api = createApiClient({ baseUrl: `${server.url}/api/v1`, token: await benchToken(server) });
  await api.POST('/webhooks', { body: { url: receiver.url, events: ['project.created'] } });
  const latencies: number[] = [];
  for (let i = 0; i < 200; i++) {
    const arrived = new Promise<number>((done) => (receiver.onRequest = () => done(performance.now())));
    const sent = performance.now();
    await api.POST('/projects', { body: { name: `Latency ${i}` } });
    latencies.push((await arrived) - sent);
  }
  receiver.onRequest = undefined;
  await server.stop();
  const p99 = percentile(latencies, 99);
  say(`webhooks: first attempt, from sending the change (before its commit) to the delivery's arrival, 200 changes one at a time: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (target < 1000 ms: ${p99 < 1000 ? 'met' : 'MISSED'})`);
  if (p99 >= 1000) failures.push(`webhook first-attempt p99 ${p99.toFixed(0)} ms is over 1 s`);

  // Throughput: a backlog written by a server that sends nothing (WEBHOOK_CONCURRENCY=0), then drained by another on one core.
  const writer = await start('server/main.ts', { ...hooks, WEBHOOK_CONCURRENCY: '0' }, false);
  const writerApi = createApiClient({ baseUrl: `${writer.url}/api/v1`, token: await benchToken(writer) });
  // 20,000 deliveries: a drain of several seconds, so that the rate is the sender's steady pace, not its warm-up (with
  // 5,000, a drain of 2–3 s, the same code gave 1,600 to 2,200 a second from run to run).
  const subscriptions = 20;
  const changes = 1000;
  for (let i = 0; i < subscriptions; i++) await writerApi.POST('/webhooks', { body: { url: receiver.url, events: ['project.created'] } });
  for (let i = 0; i < changes; i++) await writerApi.POST('/projects', { body: { name: `Backlog ${i}` } });
  const dataDir = writer.dataDir;
  // Stopped without removing its data folder, which the sender reads next.
  await new Promise<void>((done) => {
    writer.child.once('exit', () => done());
    writer.child.kill('SIGTERM');
  });
  const backlog = subscriptions * changes;
  receiver.received.length = 0;
  // The drain is timed from the first delivery's arrival to the last's: the server's start (its modules, the
  // validator's schemas), a one-off, is printed apart and kept out of the rate.
  // And the sender's CPU from then on: on this shared machine the wall clock also counts the time others took the core.
  let firstArrival = 0;
  let cpuAtFirst = 0;
  receiver.onRequest = () => {
    if (firstArrival) return;
    firstArrival = performance.now();
    // The sender is the server started last, and start() may not have returned yet.
    cpuAtFirst = cpuSeconds([...running].at(-1)!.pid!);
  };
  const started = performance.now();
  const sender = await start('server/main.ts', { ...hooks, DATA_DIR: dataDir });
  await receiver.waitFor(backlog, 600_000);
  const drained = performance.now();
  receiver.onRequest = undefined;
  const drainSeconds = (drained - firstArrival) / 1000;
  const senderCpu = cpuSeconds(sender.child.pid!);
  const cpuPerDelivery = ((senderCpu - cpuAtFirst) / (backlog - 1)) * 1000;
  await sender.stop();
  rmSync(dataDir, { recursive: true, force: true });
  const perSecond = (backlog - 1) / drainSeconds;
  // The baseline: the receiver's own rate for POSTs of one delivery's body, from one core (autocannon, 16 connections).
  // The median of `rounds` runs: one run of a few seconds varied by half from run to run on a quiet machine.
  const body = receiver.received[0].body;
  const rawRuns: number[] = [];
  for (let round = 0; round < rounds; round++) {
    rawRuns.push((await autocannon({ url: receiver.url, method: 'POST', body, headers: { 'Content-Type': 'application/json' }, connections: 16, duration: seconds })).requests.average);
  }
  const rawRate = medianOf(rawRuns);
  // The ceiling: Node's own HTTP client, on the sender's core, signing and POSTing as many deliveries with no database.
  const bareSenderRuns: number[] = [];
  for (let round = 0; round < rounds; round++) bareSenderRuns.push(await bareSenderRate(receiver.url, body, backlog));
  const bareSender = medianOf(bareSenderRuns);
  const share = perSecond / rawRate;
  // The target: "webhook deliveries per second on one core, against the receiver's raw rate: ≥ 25 %".
  const target = 0.25;
  say(
    `webhooks: ${backlog} deliveries drained in ${drainSeconds.toFixed(1)} s from the first one's arrival (${((drained - started) / 1000).toFixed(1)} s with the server's start) ` +
      `by one server on one core (${senderCpu.toFixed(1)} CPU s, including its start; ${cpuPerDelivery.toFixed(2)} CPU ms per delivery after the first): ` +
      `${perSecond.toFixed(0)} deliveries/s, against ${rawRate.toFixed(0)} raw POSTs/s to the same receiver (the median of ${rawRuns.map((rate) => rate.toFixed(0)).join(', ')})`,
  );
  say(
    `webhooks: Node's HTTP client alone (no database; signed, ${WEBHOOK_CONCURRENCY_DEFAULT} at a time, one core), the ceiling of the server's rate: ` +
      `${bareSender.toFixed(0)} deliveries/s, ${((bareSender / rawRate) * 100).toFixed(1)} % of the receiver's raw rate; the server's is ${ratio(perSecond, bareSender)}× it`,
  );
  say(`webhooks: deliveries per second against the receiver's raw rate: ${(share * 100).toFixed(1)} % (target >= ${target * 100} %: ${share >= target ? 'met' : 'MISSED'})`);
  if (share < target) failures.push(`webhook deliveries at ${(share * 100).toFixed(1)} % of the receiver's raw rate (${perSecond.toFixed(0)}/s against ${rawRate.toFixed(0)}/s), target 25 %`);
  await receiver.close();
}

export const part: BenchPart = {
  name: 'webhooks',
  title: 'Webhooks',
  summary: 'the first attempt of a delivery after its change commits (200 changes, one at a time: p50 and p99, target p99 < 1 s); then deliveries per second from one server on one core, draining a backlog of 20,000 (1,000 changes × 20 subscriptions), against the same receiver\'s raw rate for POSTs of the same body (the median of the rounds).',
  readme: new URL('./webhooks.md', import.meta.url),
  run,
};
