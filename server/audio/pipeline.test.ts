import { spawn } from 'node:child_process';
import { writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestServer, type Harness } from '../testing/harness.ts';
import { makeAudio, sineAt } from '../testing/audio.ts';
import { waitForStatus } from '../testing/files.ts';
import { SystemMediaTools, type MediaTools } from './media-tools.ts';
import { startAudioWorker } from './audio-worker.ts';
import type { Logger } from '../http/logger.ts';
import { fileBlobKey, renditionBlobKey, VARIANT_NAMES } from '../blobs/keys.ts';

const root = resolve(import.meta.dirname, '../..');
const fast = { PROCESSING: 'in-process', JOB_POLL_MS: '50', JOB_BACKOFF_MS: '100' };

async function uploaded(t: Harness, name: string, mimeType: string, bytes: Uint8Array, email = 'producer@example.com') {
  const { api } = await t.as(email);
  const { data: project } = await api.POST('/projects', { body: { name: 'Pipeline' } });
  const { box } = await api.uploadFile(project!.id, { name, mimeType }, bytes);
  return { api, projectid: project!.id, boxid: box.id };
}

async function probeBytes(bytes: ArrayBuffer, name: string) {
  const file = join(await mkdtemp(join(tmpdir(), 'probe-')), name);
  await writeFile(file, Buffer.from(bytes));
  return new SystemMediaTools().probe(file);
}

describe('audio pipeline, in the server', () => {
  const t = useTestServer('sqlite', fast);
  let wav24: Buffer;
  beforeAll(async () => {
    wav24 = await makeAudio('mix.wav', ['-f', 'lavfi', '-i', `aevalsrc=${sineAt(-10)}|${sineAt(-10)}:s=48000:d=3:c=stereo`, '-c:a', 'pcm_s24le']);
  });

  it('analyses an uploaded WAV, and serves its renditions and peaks through signed URLs', async () => {
    const { api, projectid, boxid } = await uploaded(t, 'mix.wav', 'audio/wav', wav24);
    const file = await waitForStatus(api, projectid, boxid);
    expect(file).toMatchObject({ status: 'ready', duration: 3, audio: { codec: 'pcm_s24le', bitDepth: 24, sampleRate: 48000, renditions: ['original', 'compressed', 'lossless'] } });
    expect(file.audio!.loudness.truePeakDbtp).toBeCloseTo(-10, 0);
    const path = { projectid, fileid: boxid };

    const compressed = await api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path, query: { quality: 'compressed' } } });
    const m4a = await fetch(compressed.data!.url);
    expect(m4a.headers.get('content-type')).toBe('audio/mp4');
    expect(m4a.headers.get('content-disposition')).toBe('attachment; filename="mix.m4a"');
    expect((await probeBytes(await m4a.arrayBuffer(), 'c.m4a')).streams[0]).toMatchObject({ codec_name: 'aac', channels: 2 });

    const lossless = await api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path, query: { quality: 'lossless' } } });
    const flac = await fetch(lossless.data!.url);
    expect((await probeBytes(await flac.arrayBuffer(), 'l.flac')).streams[0]).toMatchObject({ codec_name: 'flac', bits_per_raw_sample: '24', sample_rate: '48000' });

    const original = await api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path } });
    expect(Buffer.from(await (await fetch(original.data!.url)).arrayBuffer()).equals(wav24)).toBe(true);

    const peaks = await api.GET('/projects/{projectid}/files/{fileid}/peaks', { params: { path } });
    const json = await (await fetch(peaks.data!.url)).json();
    expect(json).toMatchObject({ version: 2, channels: 1, sample_rate: 48000, samples_per_pixel: 480, bits: 8, length: 300 });
    const dat = await api.GET('/projects/{projectid}/files/{fileid}/peaks', { params: { path, query: { format: 'dat' } } });
    const binary = Buffer.from(await (await fetch(dat.data!.url)).arrayBuffer());
    expect(binary.length).toBe(24 + 600);
    expect(binary.readUInt32LE(16)).toBe(300);

    // Deleting the file removes the renditions and peaks with the original.
    await api.DELETE('/projects/{projectid}/files/{fileid}', { params: { path } });
    for (const url of [m4a.url, flac.url, original.data!.url]) expect((await fetch(url)).status).toBe(404);
    const left = await Promise.all(VARIANT_NAMES.map((variant) => t.server.ctx.blobs.stat(renditionBlobKey(projectid, boxid, variant))));
    expect(left).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('refuses a lossless rendition of a lossy file, and renditions and peaks of a file that is not audio', async () => {
    const mp3 = await makeAudio('a.mp3', ['-f', 'lavfi', '-i', 'sine=duration=1', '-c:a', 'libmp3lame']);
    const song = await uploaded(t, 'a.mp3', 'audio/mpeg', mp3);
    expect(await waitForStatus(song.api, song.projectid, song.boxid)).toMatchObject({ status: 'ready', audio: { renditions: ['original', 'compressed'] } });
    const lossless = await song.api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path: { projectid: song.projectid, fileid: song.boxid }, query: { quality: 'lossless' } } });
    expect(lossless.response.status).toBe(409);
    expect(lossless.error!.detail).toMatch(/not lossless/);

    const pdf = await uploaded(t, 'lyrics.pdf', 'application/pdf', new TextEncoder().encode('%PDF-1.7 lyrics'));
    const { data } = await pdf.api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid: pdf.projectid, fileid: pdf.boxid } } });
    expect(data).toMatchObject({ status: 'ready' });
    expect(data).not.toHaveProperty('duration');
    expect(data).not.toHaveProperty('audio');
    const peaks = await pdf.api.GET('/projects/{projectid}/files/{fileid}/peaks', { params: { path: { projectid: pdf.projectid, fileid: pdf.boxid } } });
    expect(peaks.response.status).toBe(409);
  });

  it('fails a corrupt file and an empty one with a reason, keeps them downloadable, and goes on with the others', async () => {
    const corrupt = await uploaded(t, 'broken.mp3', 'audio/mpeg', new Uint8Array(4096).map((_, i) => (i * 31) % 251));
    const empty = await uploaded(t, 'empty.wav', 'audio/wav', new Uint8Array(0));
    const good = await uploaded(t, 'good.wav', 'audio/wav', wav24);
    const [corruptFile, emptyFile, goodFile] = await Promise.all([
      waitForStatus(corrupt.api, corrupt.projectid, corrupt.boxid),
      waitForStatus(empty.api, empty.projectid, empty.boxid),
      waitForStatus(good.api, good.projectid, good.boxid),
    ]);
    expect(corruptFile).toMatchObject({ status: 'failed', statusReason: expect.stringMatching(/could not/) });
    expect(corruptFile).not.toHaveProperty('duration');
    expect(emptyFile).toMatchObject({ status: 'failed', statusReason: expect.any(String) });
    expect(goodFile.status).toBe('ready');
    const download = await corrupt.api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path: { projectid: corrupt.projectid, fileid: corrupt.boxid } } });
    expect(download.response.status).toBe(200);
  });

  it('fails, after its retries, a file whose stored bytes went missing, and leaves no scratch folders', async () => {
    const { api, projectid, boxid } = await uploaded(t, 'lost.wav', 'audio/wav', wav24);
    await t.server.ctx.blobs.delete(fileBlobKey(projectid, boxid));
    const file = await waitForStatus(api, projectid, boxid, ['ready', 'failed'], { timeoutMs: 30_000 });
    expect(file).toMatchObject({ status: 'failed', statusReason: expect.stringMatching(/No blob/) });
    const { readdir } = await import('node:fs/promises');
    expect(await readdir(join(t.server.ctx.config.dataDir, 'tmp')).catch(() => [])).toEqual([]);
  });

  it('processes a three-hour recording', async () => {
    const long = await makeAudio('long.flac', ['-f', 'lavfi', '-i', 'anullsrc=sample_rate=8000:channel_layout=mono', '-t', '10800', '-c:a', 'flac']);
    const { api, projectid, boxid } = await uploaded(t, 'rehearsal.flac', 'audio/flac', long);
    const file = await waitForStatus(api, projectid, boxid, ['ready', 'failed'], { timeoutMs: 120_000 });
    expect(file).toMatchObject({ status: 'ready', duration: 10800, audio: { sampleRate: 8000, channels: 1, peaks: { length: 1_080_000 } } });
  }, 150_000);
});

describe('audio pipeline, retries and crashes', () => {
  /** Fails its first run with a passing error, as a full disk or a killed process would. */
  class FlakyOnce implements MediaTools {
    private real = new SystemMediaTools();
    failures = 0;
    unavailable = () => this.real.unavailable();
    probe = (path: string) => this.real.probe(path);
    async ffmpeg(args: string[], onStdout: (chunk: Buffer) => void) {
      if (this.failures++ === 0) throw new Error('No space left on device (simulated)');
      return this.real.ffmpeg(args, onStdout);
    }
  }
  const flaky = new FlakyOnce();
  const t = useTestServer('sqlite', fast, { media: flaky });

  it('retries a job after a passing failure, with backoff', async () => {
    const wav = await makeAudio('retry.wav', ['-f', 'lavfi', '-i', 'sine=duration=1', '-c:a', 'pcm_s16le']);
    const { api, projectid, boxid } = await uploaded(t, 'retry.wav', 'audio/wav', wav);
    expect(await waitForStatus(api, projectid, boxid)).toMatchObject({ status: 'ready', duration: 1 });
    expect(flaky.failures).toBe(2);
    const [job] = await t.server.ctx.store.db.query<{ status: string; attempts: number; last_error: string }>('SELECT status, attempts, last_error FROM jobs');
    expect(job).toEqual({ status: 'done', attempts: 2, last_error: 'No space left on device (simulated)' });
  });
});

describe('audio pipeline, a worker that dies midway', () => {
  const t = useTestServer('sqlite', { PROCESSING: 'external', JOB_LEASE_SECONDS: '1', JOB_POLL_MS: '50' });

  it('is picked up again by another worker once the lease runs out', async () => {
    const wav = await makeAudio('long.wav', ['-f', 'lavfi', '-i', 'sine=sample_rate=48000:duration=240', '-ac', '2', '-c:a', 'pcm_s16le']);
    const { api, projectid, boxid } = await uploaded(t, 'long.wav', 'audio/wav', wav);
    const env = { ...process.env, DATA_DIR: t.server.ctx.config.dataDir, DATABASE_URL: '', JOB_LEASE_SECONDS: '1', JOB_POLL_MS: '50', LOG_LEVEL: 'silent' };
    const doomed = spawn(process.execPath, ['--import', 'tsx', 'server/worker-main.ts'], { cwd: root, env, stdio: 'ignore' });
    await waitForStatus(api, projectid, boxid, ['processing'], { timeoutMs: 30_000 });
    doomed.kill('SIGKILL');
    await new Promise((r) => doomed.once('exit', r));
    // Nobody works on it now; the file says so until the lease runs out.
    expect((await waitForStatus(api, projectid, boxid, ['processing', 'pending'])).status).toBe('processing');
    const worker = await startAudioWorker(t.server.ctx);
    try {
      const file = await waitForStatus(api, projectid, boxid, ['ready', 'failed'], { timeoutMs: 60_000 });
      expect(file).toMatchObject({ status: 'ready', duration: 240 });
      const [job] = await t.server.ctx.store.db.query<{ status: string; attempts: number }>('SELECT status, attempts FROM jobs');
      expect(job).toEqual({ status: 'done', attempts: 2 });
    } finally {
      await worker?.stop();
    }
  }, 120_000);
});

describe('without ffmpeg', () => {
  const t = useTestServer('sqlite', fast, {
    media: { unavailable: async () => 'ffmpeg was not found or does not run', probe: () => Promise.reject(new Error('no')), ffmpeg: () => Promise.reject(new Error('no')) },
  });

  it('starts, says that processing is off, and keeps uploaded audio pending', async () => {
    expect(t.server.worker).toBeUndefined();
    const warnings: string[] = [];
    const logger: Logger = { enabled: () => true, debug() {}, info() {}, error() {}, warn: (message) => warnings.push(message) };
    expect(await startAudioWorker({ ...t.server.ctx, logger })).toBeUndefined();
    expect(warnings[0]).toMatch(/Audio processing is off: ffmpeg was not found.*apt-get install ffmpeg.*brew install ffmpeg/);
    const wav = await makeAudio('wait.wav', ['-f', 'lavfi', '-i', 'sine=duration=1', '-c:a', 'pcm_s16le']);
    const { api, projectid, boxid } = await uploaded(t, 'wait.wav', 'audio/wav', wav);
    await new Promise((r) => setTimeout(r, 500));
    expect((await waitForStatus(api, projectid, boxid, ['pending', 'ready', 'failed'])).status).toBe('pending');
  });
});
