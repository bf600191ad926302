/**
 * The bench's `latency` part. What it measures, and how, is its paragraph of bench/README.md's list of parts,
 * kept in latency.md beside this file and written into the README by `npm run bench:readme`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiClient } from '../../generated/client.ts';
import { analyseAudio } from '../../server/audio/analyse.ts';
import { SystemMediaTools } from '../../server/audio/media-tools.ts';
import { measureEventLoop } from '../../server/testing/audio.ts';
import { waitForStatus } from '../../server/testing/files.ts';
import { benchToken } from '../lib/accounts.ts';
import { ratio } from '../lib/figures.ts';
import { load } from '../lib/load.ts';
import { start } from '../lib/servers.ts';
import { rounds, seconds } from '../lib/settings.ts';
import type { BenchPart, PartContext } from '../lib/part.ts';

async function run({ say }: PartContext): Promise<void> {
  // --- API latency while audio is analysed -------------------------------------
  // One server, pinned to core 1 as for the reads, analysing in-process: its ffmpeg inherits the pinning, so the
  // analysis competes with the API for that one core (the load generator has core 0).
  spawnSync('taskset', ['-pc', '0', String(process.pid)]);
  const wavSeconds = Number(process.env.BENCH_LATENCY_AUDIO_SECONDS ?? 600);
  const audioDir = mkdtempSync(join(tmpdir(), 'bench-latency-'));
  const wav = join(audioDir, 'mix.wav');
  spawnSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `anoisesrc=color=pink:amplitude=0.3:sample_rate=48000:duration=${wavSeconds}`, '-af', 'pan=stereo|c0=c0|c1=0.8*c0', '-c:a', 'pcm_s24le', wav]);
  // The event loop of a thread that runs an analysis, here, with nothing else to do: what requests would wait for.
  spawnSync('taskset', ['-pc', '0,1', String(process.pid)]);
  const loop = measureEventLoop();
  await analyseAudio(new SystemMediaTools(), wav, mkdtempSync(join(audioDir, 'analyse-')), statSync(wav).size);
  const stalls = loop.stop();
  say(
    `event loop while this thread analyses the ${wavSeconds} s WAV: longest delay ${stalls.maxMs.toFixed(1)} ms, p99 ${stalls.p99Ms.toFixed(1)} ms, ` +
      `longest busy stretch ${stalls.maxBusyMs?.toFixed(1) ?? '(Linux only)'} ms`,
  );
  spawnSync('taskset', ['-pc', '0', String(process.pid)]);

  const server = await start('server/main.ts', { PROCESSING: 'in-process', JOB_POLL_MS: '20' });
  const token = await benchToken(server);
  const api = createApiClient({ baseUrl: server.url + '/api/v1', token });
  const { data: project } = await api.POST('/projects', { body: { name: 'Latency' } });
  const { data: player } = await api.POST('/players', { body: { name: 'Latency', projectid: project!.id } });
  const target = `${server.url}/api/v1/players/${player!.id}`;
  const headers = { Authorization: `Bearer ${token}` };

  // Rounds alternate a run at idle with a run while a job is under way (a new upload each round); each figure is the
  // median of the rounds, so that drift in the machine's speed falls on both alike.
  const idle: Array<{ rps: number; p99: number }> = [];
  const busy: Array<{ rps: number; p99: number }> = [];
  for (let round = 0; round < rounds; round++) {
    idle.push(await load(target, headers));
    const { box } = (await api.uploadFile(project!.id, { name: `mix-${round}.wav`, mimeType: 'audio/wav' }, readFileSync(wav))).data!;
    await waitForStatus(api, project!.id, box.id, ['processing'], { intervalMs: 20 });
    busy.push(await load(target, headers));
    // The figure counts only if the job ran for the whole run.
    const stillRunning = (await waitForStatus(api, project!.id, box.id, ['pending', 'processing', 'ready', 'failed'])).status === 'processing';
    const done = await waitForStatus(api, project!.id, box.id, ['ready', 'failed'], { timeoutMs: 600_000, intervalMs: 100 });
    if (done.status !== 'ready') throw new Error(`the bench file failed to process: ${done.statusReason}`);
    if (!stillRunning) throw new Error(`the analysis ended before the ${seconds} s run under load did; set BENCH_LATENCY_AUDIO_SECONDS higher`);
  }
  await server.stop();
  rmSync(audioDir, { recursive: true, force: true });
  const median = (runs: Array<{ rps: number; p99: number }>, key: 'rps' | 'p99') => runs.map((run) => run[key]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  const list = (runs: Array<{ rps: number; p99: number }>) => runs.map((run) => run.p99).join(', ');
  say(
    `API while a ${wavSeconds} s WAV is analysed (server and ffmpeg on one core): GET /players/:id p99 ${median(busy, 'p99')} ms (${median(busy, 'rps').toFixed(0)} req/s), ` +
      `at idle ${median(idle, 'p99')} ms (${median(idle, 'rps').toFixed(0)} req/s); ${ratio(median(busy, 'p99'), median(idle, 'p99'))}× the idle p99 (goal ≤ 1.5×); ` +
      `p99 of each round: while analysing ${list(busy)} ms, at idle ${list(idle)} ms`,
  );
}

export const part: BenchPart = {
  name: 'latency',
  title: 'Latency while audio is analysed',
  summary: 'the API\'s p99 latency (GET /players/:id, 50 connections) while the server analyses a 10-minute WAV in-process, against its p99 at idle, in the same run; the server and its ffmpeg share one core. Then the event loop of a thread that analyses the same file (in this process): its longest delay, its p99, and the longest stretch it was busy.',
  readme: new URL('./latency.md', import.meta.url),
  run,
};
