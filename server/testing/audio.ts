/** Real audio for tests, made by ffmpeg from exact lavfi signals. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFile, rm } from 'node:fs/promises';
import { mkdtempSync } from 'node:fs';
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
export const sineAt = (dbfs: number) => `${Math.pow(10, dbfs / 20)}*sin(2*PI*1000*t)`;

/** ffmpeg arguments for a stereo 48 kHz 1 kHz sine made of segments of [dBFS, seconds], joined with concat. */
export function stereoSegments(segments: Array<[number, number]>): string[] {
  const inputs = segments.flatMap(([dbfs, seconds]) => ['-f', 'lavfi', '-i', `aevalsrc=${sineAt(dbfs)}|${sineAt(dbfs)}:s=48000:d=${seconds}:c=stereo`]);
  const filter = segments.map((_, i) => `[${i}:a]`).join('') + `concat=n=${segments.length}:v=0:a=1[out]`;
  return [...inputs, '-filter_complex', filter, '-map', '[out]'];
}
