/**
 * The bench's `audio` part. What it measures, and how, is its paragraph of bench/README.md's list of parts,
 * kept in audio.md beside this file and written into the README by `npm run bench:readme`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOOL_NICENESS } from '../../server/audio/media-tools.ts';
import { waitForStatus } from '../../server/testing/files.ts';
import { seed } from '../lib/accounts.ts';
import { ratio } from '../lib/figures.ts';
import { start } from '../lib/servers.ts';
import type { BenchPart, PartContext } from '../lib/part.ts';

async function run({ say, failures }: PartContext): Promise<void> {
  // --- audio pipeline -------------------------------------------------------
  const wavSeconds = Number(process.env.BENCH_AUDIO_SECONDS ?? 300);
  const audioDir = mkdtempSync(join(tmpdir(), 'bench-audio-'));
  const wav = join(audioDir, 'mix.wav');
  spawnSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `anoisesrc=color=pink:amplitude=0.3:sample_rate=48000:duration=${wavSeconds}`, '-af', 'pan=stereo|c0=c0|c1=0.8*c0', '-c:a', 'pcm_s24le', wav]);

  // Nothing else runs now: ffmpeg and the server may use both cores.
  spawnSync('taskset', ['-pc', '0,1', String(process.pid)]);
  function timed(args: string[]): number {
    const started = process.hrtime.bigint();
    // At the CPU priority the server gives its ffmpeg, so that other work on the machine slows both alike.
    const result = spawnSync('nice', ['-n', String(TOOL_NICENESS), 'ffmpeg', '-v', 'error', '-nostdin', '-y', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    if (result.status !== 0) throw new Error(`ffmpeg failed: ${result.stderr}`);
    return Number(process.hrtime.bigint() - started) / 1e9;
  }
  const out = (name: string) => join(audioDir, name);
  // The same outputs: AAC 256k in M4A (faststart, for streaming), 24-bit FLAC, the loudness meter, and 16-bit mono samples for the peaks.
  const baselines = {
    'one decode, asplit': [
      '-i', wav, '-filter_complex', '[0:a]asplit=4[m][p][c][l];[m]ebur128=peak=true:metadata=1,anullsink;[p]aformat=sample_fmts=s16:channel_layouts=mono[pcm]',
      '-map', '[c]', '-c:a', 'aac', '-b:a', '256k', '-movflags', '+faststart', out('a.m4a'), '-map', '[l]', '-c:a', 'flac', '-sample_fmt', 's32', '-bits_per_raw_sample', '24', out('a.flac'),
      '-map', '[pcm]', '-f', 's16le', '/dev/null',
    ],
    'one output per map': [
      '-i', wav, '-map', '0:a', '-c:a', 'aac', '-b:a', '256k', '-movflags', '+faststart', out('b.m4a'), '-map', '0:a', '-c:a', 'flac', '-sample_fmt', 's32', '-bits_per_raw_sample', '24', out('b.flac'),
      '-map', '0:a', '-af', 'ebur128=peak=true', '-f', 'null', '/dev/null', '-map', '0:a', '-ac', '1', '-f', 's16le', '/dev/null',
    ],
  };
  const baselineTimes = Object.entries(baselines).map(([name, args]) => ({ name, seconds: Math.min(timed(args), timed(args)) }));
  const fastest = baselineTimes.reduce((a, b) => (a.seconds <= b.seconds ? a : b));

  const audioServer = await start('server/main.ts', { PROCESSING: 'in-process', JOB_POLL_MS: '20' }, false);
  const audioSeed = await seed(audioServer);
  const pipelineTimes: number[] = [];
  for (let run = 0; run < 2; run++) {
    const bytes = readFileSync(wav);
    const { box } = (await audioSeed.api.uploadFile(audioSeed.projectid, { name: `mix-${run}.wav`, mimeType: 'audio/wav' }, bytes)).data!;
    const started = process.hrtime.bigint();
    const done = await waitForStatus(audioSeed.api, audioSeed.projectid, box.id, ['ready', 'failed'], { intervalMs: 20 });
    if (done.status === 'failed') throw new Error(`the bench file failed to process: ${done.statusReason}`);
    pipelineTimes.push(Number(process.hrtime.bigint() - started) / 1e9);
  }
  await audioServer.stop();
  rmSync(audioDir, { recursive: true, force: true });
  const pipeline = Math.min(...pipelineTimes);
  // The fastest command's multiple of realtime is the ceiling of the pipeline's, which runs the same work and more.
  for (const baseline of baselineTimes) say(`ffmpeg alone (${baseline.name}): ${baseline.seconds.toFixed(2)} s, ${(wavSeconds / baseline.seconds).toFixed(1)}× realtime`);
  say(`audio pipeline, ${wavSeconds} s 48 kHz / 24-bit stereo WAV: ${pipeline.toFixed(2)} s (${ratio(pipeline, fastest.seconds)}× the fastest ffmpeg command), ${(wavSeconds / pipeline).toFixed(0)}× realtime`);
  // Issue 23: "5-minute 24-bit WAV, against the fastest single ffmpeg command for the same outputs: ≤ 1.1×, ≥ 40× realtime".
  if (pipeline / fastest.seconds > 1.1) failures.push(`audio: ${ratio(pipeline, fastest.seconds)}× the fastest ffmpeg command, target ≤ 1.1×`);
  if (wavSeconds / pipeline < 40) failures.push(`audio: ${(wavSeconds / pipeline).toFixed(1)}× realtime, target ≥ 40×`);
}

export const part: BenchPart = {
  name: 'audio',
  title: 'Audio',
  summary: 'processing a 5-minute 48 kHz / 24-bit stereo WAV, from the end of its upload to `ready`, against the fastest single ffmpeg command that makes the same outputs (target ≤ 1.1×); and as a multiple of realtime (target ≥ 40×).',
  readme: new URL('./audio.md', import.meta.url),
  run,
};
