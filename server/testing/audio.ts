/** Real audio for tests, made by ffmpeg from exact lavfi signals. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const run = promisify(execFile);

/** Runs ffmpeg with `args` (inputs, filters, codec options) writing to a new file named `name`; returns its path. */
export async function makeAudioFile(name: string, args: string[]): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), 'audio-')), name);
  await run('ffmpeg', ['-v', 'error', '-nostdin', '-y', ...args, file], { maxBuffer: 16 * 1024 * 1024 });
  return file;
}

export async function makeAudio(name: string, args: string[]): Promise<Buffer> {
  const file = await makeAudioFile(name, args);
  try {
    return await readFile(file);
  } finally {
    await rm(file, { force: true });
  }
}

/** A sine tone as a WAV file (16-bit PCM, stereo), `seconds` long. */
export function sineWav(seconds: number, frequency = 1000, sampleRate = 48000): Promise<Buffer> {
  return makeAudio('tone.wav', ['-f', 'lavfi', '-i', `sine=frequency=${frequency}:sample_rate=${sampleRate}:duration=${seconds}`, '-ac', '2', '-c:a', 'pcm_s16le']);
}

/** A 1 kHz sine at a peak level in dBFS, as an aevalsrc expression (EBU Tech 3341 signals). */
export const sineAt = (dbfs: number) => `${10 ** (dbfs / 20)}*sin(2*PI*1000*t)`;

/** ffmpeg arguments for a stereo 48 kHz 1 kHz sine made of segments of [dBFS, seconds], joined with concat. */
export function stereoSegments(segments: Array<[number, number]>): string[] {
  const inputs = segments.flatMap(([dbfs, seconds]) => ['-f', 'lavfi', '-i', `aevalsrc=${sineAt(dbfs)}|${sineAt(dbfs)}:s=48000:d=${seconds}:c=stereo`]);
  const filter = segments.map((_, i) => `[${i}:a]`).join('') + `concat=n=${segments.length}:v=0:a=1[out]`;
  return [...inputs, '-filter_complex', filter, '-map', '[out]'];
}

/**
 * The processes `parent` (this process by default) started that run
 * `command` (by name), and have `argument` among their arguments if given,
 * from /proc; Linux only.
 */
export async function childProcesses(command: string, { parent = process.pid, argument }: { parent?: number; argument?: string } = {}): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ESRCH') return undefined; // it ended while we looked
      throw error;
    });
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after its last ")".
    const match = stat && /^\d+ \((.*)\) \S+ (\d+) /s.exec(stat);
    if (!match || match[1] !== command || Number(match[2]) !== parent) continue;
    if (argument !== undefined) {
      const args = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' || error.code === 'ESRCH') return ''; // it ended while we looked
        throw error;
      });
      if (!args.split('\0').includes(argument)) continue;
    }
    pids.push(Number(entry));
  }
  return pids;
}

/** Whether the process runs (a zombie that has exited does not). */
export async function isRunning(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ESRCH') return undefined; // reaped: gone
    throw error;
  });
  return stat !== undefined && !/^\d+ \(.*\) [ZX] /s.test(stat);
}

/** The nice value of a process, from /proc/PID/stat (field 19). */
export async function niceness(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** Polls `check` until it answers true; fails after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean> | boolean, what: string, { timeoutMs = 10_000, intervalMs = 20 } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Still not true after ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Writes an executable shell script, to stand in for ffmpeg (FFMPEG_PATH)
 * and run the real one under conditions the test sets: `ulimit -f`, a tiny
 * file system. Returns its path.
 */
export async function toolWrapper(name: string, script: string): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), 'tool-')), name);
  await writeFile(file, `#!/bin/sh\n${script}\n`, { mode: 0o755 });
  return file;
}

/**
 * Measures how long the event loop of this thread is held up: the longest
 * and the 99th percentile delay (perf_hooks monitorEventLoopDelay, which
 * includes time the thread waits for a core), and, on Linux, the longest
 * stretch the thread spent running between two turns of a 1 ms timer
 * (from /proc/self/task/PID/schedstat), which is the work done on the
 * thread alone and so does not count time other processes took the core.
 */
export function measureEventLoop(): { stop(): { maxMs: number; p99Ms: number; maxBusyMs: number | undefined } } {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const schedstat = `/proc/self/task/${process.pid}/schedstat`;
  const onCpu = () => Number(readFileSync(schedstat, 'utf8').split(' ')[0]);
  const linux = existsSync(schedstat);
  let maxBusyNs = 0;
  let last = linux ? onCpu() : 0;
  const timer = setInterval(() => {
    if (!linux) return;
    const now = onCpu();
    maxBusyNs = Math.max(maxBusyNs, now - last);
    last = now;
  }, 1);
  return {
    stop() {
      clearInterval(timer);
      histogram.disable();
      return { maxMs: histogram.max / 1e6, p99Ms: histogram.percentile(99) / 1e6, maxBusyMs: linux ? maxBusyNs / 1e6 : undefined };
    },
  };
}
