/** Real audio for tests, made by ffmpeg from exact lavfi signals. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFile, rm } from 'node:fs/promises';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const run = promisify(execFile);

/** A sine tone as a WAV file (16-bit PCM), `seconds` long. */
export async function sineWav(seconds: number, frequency = 1000, sampleRate = 48000): Promise<Buffer> {
  const file = join(mkdtempSync(join(tmpdir(), 'tone-')), 'tone.wav');
  await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', `sine=frequency=${frequency}:sample_rate=${sampleRate}:duration=${seconds}`, '-ac', '2', '-c:a', 'pcm_s16le', file]);
  try {
    return await readFile(file);
  } finally {
    await rm(file, { force: true });
  }
}
