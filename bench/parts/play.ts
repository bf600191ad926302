/**
 * The bench's `play` part. What it measures, and how, is its paragraph of bench/README.md's list of parts,
 * kept in play.md beside this file and written into the README by `npm run bench:readme`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiClient } from '../../generated/client.ts';
import { launchBrowser } from '../../server/testing/browser.ts';
import { waitForStatus } from '../../server/testing/files.ts';
import { benchToken } from '../lib/accounts.ts';
import { ratio } from '../lib/figures.ts';
import { firstAudio, type FirstAudio } from '../lib/first-audio.ts';
import { start } from '../lib/servers.ts';
import type { BenchPart, PartContext } from '../lib/part.ts';

async function run({ say }: PartContext): Promise<void> {
  // --- first audio after a click on Play, on loopback ------------------------------
  // The server (SQLite, analysing in-process) and the baseline each on core 1, as for the reads; this process and
  // Chromium, which inherits its pinning, on core 0. The player plays a 3-minute 48 kHz / 24-bit stereo pink-noise WAV;
  // the baseline is a bare <audio> on a plain page served by node:http with the very file the player page plays.
  spawnSync('taskset', ['-pc', '0', String(process.pid)]);
  const runsWanted = Number(process.env.BENCH_PLAY_RUNS ?? 10);
  const audioDir = mkdtempSync(join(tmpdir(), 'bench-play-'));
  const wav = join(audioDir, 'track.wav');
  spawnSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'anoisesrc=color=pink:amplitude=0.3:sample_rate=48000:duration=180', '-af', 'pan=stereo|c0=c0|c1=0.8*c0', '-c:a', 'pcm_s24le', wav]);
  const wavBytes = statSync(wav).size;
  const server = await start('server/main.ts', { PROCESSING: 'in-process', JOB_POLL_MS: '20' });
  const token = await benchToken(server);
  const api = createApiClient({ baseUrl: server.url + '/api/v1', token });
  const { data: project } = await api.POST('/projects', { body: { name: 'Play bench' } });
  const uploaded = await api.uploadFile(project!.id, { name: 'track.wav', mimeType: 'audio/wav' }, readFileSync(wav));
  if (!uploaded.data) throw new Error(`upload failed: ${JSON.stringify(uploaded.error)}`);
  const analysed = await waitForStatus(api, project!.id, uploaded.data.box.id, ['ready', 'failed'], { timeoutMs: 600_000, intervalMs: 100 });
  if (analysed.status !== 'ready') throw new Error(`the bench file failed to process: ${analysed.statusReason}`);
  // A player with the defaults a musician gets, open to anyone with the link.
  const { data: player } = await api.POST('/players', { body: { name: 'Play bench', projectid: project!.id, public: true } });
  const pageUrl = player!.playerUrl!;

  const browser = await launchBrowser();
  // A first run warms up both sides (the server's code paths, Chromium's media stack) and says what the page plays.
  const warmUp = await firstAudio(browser, pageUrl);
  const served = await fetch(warmUp.source);
  if (!served.ok) throw new Error(`the page's audio answered ${served.status}`);
  const played = join(audioDir, 'played');
  writeFileSync(played, Buffer.from(await served.arrayBuffer()));
  const contentType = served.headers.get('content-type') ?? 'application/octet-stream';
  const playedBytes = statSync(played).size;
  const bare = await start('bench/baselines/bare-audio-page.ts', { BENCH_AUDIO_FILE: played, BENCH_AUDIO_TYPE: contentType, BENCH_SERVER_AUDIO_URL: warmUp.source });
  for (const path of ['/', '/webaudio', '/server-stream']) await firstAudio(browser, bare.url + path);

  // The rounds alternate the four pages, so that drift in the machine's speed falls on all of them alike.
  const page: FirstAudio[] = [];
  const base: FirstAudio[] = [];
  const webAudio: FirstAudio[] = [];
  const serverStream: FirstAudio[] = [];
  for (let run = 0; run < runsWanted; run++) {
    page.push(await firstAudio(browser, pageUrl));
    base.push(await firstAudio(browser, `${bare.url}/`));
    webAudio.push(await firstAudio(browser, `${bare.url}/webaudio`));
    serverStream.push(await firstAudio(browser, `${bare.url}/server-stream`));
  }
  await browser.close();
  await Promise.all([server.stop(), bare.stop()]);
  rmSync(audioDir, { recursive: true, force: true });
  type Measure = 'playingMs' | 'advancingMs' | 'startedMs';
  const middle = (runs: FirstAudio[], key: Measure) => {
    const sorted = runs.map((run) => run[key]).sort((a, b) => a - b);
    return sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  };
  const list = (runs: FirstAudio[], key: Measure) => runs.map((run) => run[key].toFixed(0)).join(', ');
  const quality = new URL(warmUp.source).searchParams.get('variant') ?? 'original';
  say(`first audio after a click on Play, 3-minute WAV, ${(wavBytes / 1e6).toFixed(0)} MB, the page streams ${quality} (${contentType}, ${(playedBytes / 1e6).toFixed(0)} MB), median of ${runsWanted} fresh page loads:`);
  const measures = [
    ['playingMs', '`playing` event'],
    ['advancingMs', 'currentTime > 0 (seen)'],
    ['startedMs', 'playback began (seen less currentTime)'],
  ] as const;
  for (const [key, what] of measures) {
    say(
      `  click → ${what}: player page ${middle(page, key).toFixed(0)} ms, bare <audio> ${middle(base, key).toFixed(0)} ms, ${ratio(middle(page, key), middle(base, key))}× ` +
        `(runs: page ${list(page, key)}; bare ${list(base, key)} ms)`,
    );
    say(`    the bare <audio> through Web Audio (a GainNode, its context made in the click): ${middle(webAudio, key).toFixed(0)} ms (runs: ${list(webAudio, key)} ms)`);
    say(`    the bare <audio> playing the server's signed stream URL: ${middle(serverStream, key).toFixed(0)} ms (runs: ${list(serverStream, key)} ms)`);
  }
}

export const part: BenchPart = {
  name: 'play',
  title: 'Play',
  summary: 'first audio after a click on Play in headless Chromium (to the `playing` event, and to currentTime > 0), median of fresh page loads, against a bare <audio> on a plain node:http page with the same file (and, to tell apart what the page adds, the same element through a GainNode, and playing the server\'s stream URL).',
  readme: new URL('./play.md', import.meta.url),
  run,
};
