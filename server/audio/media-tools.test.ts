/**
 * The real adapter, failing as it does on a real machine: a file size limit
 * (SIGXFSZ, or EFBIG when the signal is ignored), a full file system
 * (ENOSPC), a missing or forbidden binary, an abort; and input that is not
 * audio. Each must come out as the right kind of failure.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SystemMediaTools, ToolEnvironmentError, UndecodableError } from './media-tools.ts';
import { childProcesses, eventually, isRunning, makeAudioFile, niceness, toolWrapper } from '../testing/audio.ts';

/** Encodes `input` to AAC in M4A, as the analysis does, into `output`. */
const encode = (input: string, output: string) => ['-i', input, '-map', '0:a:0', '-c:a', 'aac', '-b:a', '256k', '-f', 'mp4', output];
const scratch = () => mkdtempSync(join(tmpdir(), 'media-tools-test-'));
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected it to fail');
    },
    (error: unknown) => error as Error,
  );

/** Whether this machine lets an unprivileged user namespace mount a file system (for a real, tiny tmpfs). */
const canMountTmpfs = spawnSync('unshare', ['-rm', 'sh', '-c', 'mount -t tmpfs -o size=64k tmpfs /mnt'], { stdio: 'ignore' }).status === 0;

describe('the ffmpeg adapter tells the machine\'s failures from the input\'s', () => {
  let tone: string;
  beforeAll(async () => {
    // 20 s of stereo: about 650 kB of AAC, well over the limits below.
    tone = await makeAudioFile('tone.wav', ['-f', 'lavfi', '-i', 'sine=duration=20', '-ac', '2', '-c:a', 'pcm_s16le']);
  });

  it('a file size limit (ulimit -f) that kills ffmpeg with SIGXFSZ is the machine\'s, worth a retry', async () => {
    const ffmpeg = await toolWrapper('ffmpeg', 'ulimit -f 64\nexec ffmpeg "$@"');
    const error = await failure(new SystemMediaTools(ffmpeg).ffmpeg(encode(tone, join(scratch(), 'out.m4a')), () => {}));
    expect(error).toBeInstanceOf(ToolEnvironmentError);
    expect(error.message).toMatch(/stopped by SIGXFSZ \(the file size limit was reached\)/);
  });

  it('the same limit with SIGXFSZ ignored, where writes fail with EFBIG ("File too large"), is the machine\'s', async () => {
    const ffmpeg = await toolWrapper('ffmpeg', 'trap "" XFSZ\nulimit -f 64\nexec ffmpeg "$@"');
    const error = await failure(new SystemMediaTools(ffmpeg).ffmpeg(encode(tone, join(scratch(), 'out.m4a')), () => {}));
    expect(error).toBeInstanceOf(ToolEnvironmentError);
    expect(error.message).toMatch(/File too large/);
    // No path of the server's disk in a reason that may reach a client.
    expect(error.message).not.toContain(tmpdir());
  });

  it('an output cut off at its end, which ffmpeg 5.1 still exits 0 for ("Error writing trailer … File too large"), is a failure', async () => {
    const ffmpeg = await toolWrapper('ffmpeg', 'trap "" XFSZ\nulimit -f 64\nexec ffmpeg "$@"');
    const dir = scratch();
    // Two outputs, as the analysis writes: ffmpeg reports both cut off, and exits with 0.
    const args = [...encode(tone, join(dir, 'out.m4a')), '-map', '0:a:0', '-c:a', 'flac', '-f', 'flac', join(dir, 'out.flac')];
    const error = await failure(new SystemMediaTools(ffmpeg).ffmpeg(args, () => {}));
    expect(error).toBeInstanceOf(ToolEnvironmentError);
    expect(error.message).toMatch(/could not write its output: Error writing trailer of out\.(m4a|flac): File too large|File too large/);
  });

  it.runIf(canMountTmpfs)('a full file system (ENOSPC, "No space left on device") is the machine\'s', async () => {
    // ffmpeg runs in a mount namespace of its own, where a 64 KiB tmpfs covers the output's folder.
    const ffmpeg = await toolWrapper('ffmpeg', 'for last; do :; done\nexec unshare -rm sh -c \'mount -t tmpfs -o size=64k tmpfs "$(dirname "$0")" && exec ffmpeg "$@"\' "$last" "$@"');
    const error = await failure(new SystemMediaTools(ffmpeg).ffmpeg(encode(tone, join(scratch(), 'out.m4a')), () => {}));
    expect(error).toBeInstanceOf(ToolEnvironmentError);
    expect(error.message).toMatch(/No space left on device/);
  });

  it('a missing binary (ENOENT) and one that may not run (EACCES) are the machine\'s', async () => {
    const missing = await failure(new SystemMediaTools(join(scratch(), 'no-ffmpeg')).ffmpeg(encode(tone, join(scratch(), 'out.m4a')), () => {}));
    expect(missing).toBeInstanceOf(ToolEnvironmentError);
    expect(missing.message).toMatch(/ENOENT/);
    const notExecutable = join(scratch(), 'ffprobe');
    await writeFile(notExecutable, '#!/bin/sh\n', { mode: 0o644 });
    const forbidden = await failure(new SystemMediaTools('ffmpeg', notExecutable).probe(tone));
    expect(forbidden).toBeInstanceOf(ToolEnvironmentError);
    expect(forbidden.message).toMatch(/EACCES/);
    expect(await new SystemMediaTools(join(scratch(), 'no-ffmpeg')).unavailable()).toMatch(/was not found or does not run/);
  });

  it('a killed ffmpeg (SIGKILL, as the OOM killer does) is the machine\'s', async () => {
    const ffmpeg = await toolWrapper('ffmpeg', 'kill -KILL $$');
    const error = await failure(new SystemMediaTools(ffmpeg).ffmpeg(encode(tone, join(scratch(), 'out.m4a')), () => {}));
    expect(error).toBeInstanceOf(ToolEnvironmentError);
    expect(error.message).toMatch(/SIGKILL/);
  });

  it('input that is not audio, is cut off or is garbage is the input\'s: undecodable, with a reason and no server path', async () => {
    const dir = scratch();
    const samples: Array<[string, Buffer]> = [
      ['lyrics.wav', Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n'.repeat(50))],
      ['noise.mp3', Buffer.from(new Uint8Array(4096).map((_, i) => (i * 31) % 251))],
      ['empty.wav', Buffer.alloc(0)],
    ];
    const tools = new SystemMediaTools();
    for (const [name, bytes] of samples) {
      const file = join(dir, name);
      await writeFile(file, bytes);
      for (const run of [() => tools.probe(file), () => tools.ffmpeg(['-i', file, '-f', 'null', '-'], () => {})]) {
        const error = await failure(run());
        expect(error, name).toBeInstanceOf(UndecodableError);
        expect(error.message, name).toMatch(/could not decode the file: \S/);
        expect(error.message, name).not.toContain(dir);
      }
    }
    const m4a = await makeAudioFile('cut.m4a', ['-f', 'lavfi', '-i', 'sine=duration=5', '-c:a', 'aac']);
    const { readFile } = await import('node:fs/promises');
    const cut = join(dir, 'cut.m4a');
    await writeFile(cut, (await readFile(m4a)).subarray(0, 3000));
    expect(await failure(tools.probe(cut))).toBeInstanceOf(UndecodableError);
  });

  it('a file that went missing is the machine\'s, not the input\'s', async () => {
    const error = await failure(new SystemMediaTools().ffmpeg(['-i', join(scratch(), 'gone.wav'), '-f', 'null', '-'], () => {}));
    expect(error).toBeInstanceOf(ToolEnvironmentError);
    expect(error.message).toMatch(/No such file or directory/);
  });
});

describe('the ffmpeg adapter', () => {
  it('kills a running ffmpeg when the signal aborts, and rejects with the abort reason', async () => {
    const controller = new AbortController();
    // -re reads the input at its own pace: this decode would take 60 s.
    const run = new SystemMediaTools().ffmpeg(['-re', '-f', 'lavfi', '-i', 'sine=duration=60', '-f', 's16le', 'pipe:1'], () => {}, controller.signal);
    let pid: number | undefined;
    await eventually(async () => (pid = (await childProcesses('ffmpeg'))[0]) !== undefined, 'ffmpeg has started');
    const reason = new Error('the lease was lost');
    const aborted = Date.now();
    controller.abort(reason);
    await expect(run).rejects.toBe(reason);
    expect(Date.now() - aborted).toBeLessThan(2000);
    expect(await isRunning(pid!)).toBe(false);
  });

  it('does not start ffmpeg for a signal that has already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stopping'));
    await expect(new SystemMediaTools().probe('/dev/null', controller.signal)).rejects.toThrow('stopping');
    expect(await childProcesses('ffprobe')).toEqual([]);
  });

  it('runs ffmpeg below the server\'s CPU priority, so requests come first', async () => {
    const controller = new AbortController();
    const run = new SystemMediaTools().ffmpeg(['-re', '-f', 'lavfi', '-i', 'sine=duration=60', '-f', 's16le', 'pipe:1'], () => {}, controller.signal);
    let pid: number | undefined;
    await eventually(async () => (pid = (await childProcesses('ffmpeg'))[0]) !== undefined, 'ffmpeg has started');
    expect(await niceness(pid!)).toBe(10);
    controller.abort(new Error('done'));
    await expect(run).rejects.toThrow('done');
  });
});
