import { mkdtempSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyseAudio } from './analyse.ts';
import { SystemMediaTools, UndecodableError } from './media-tools.ts';
import { makeAudioFile, sineAt, stereoSegments } from '../testing/audio.ts';

const tools = new SystemMediaTools();
const workDir = () => mkdtempSync(join(tmpdir(), 'analyse-test-'));
const analyse = async (file: string) => analyseAudio(tools, file, workDir(), (await stat(file)).size);
const pcm24 = ['-c:a', 'pcm_s24le'];

describe('EBU Tech 3341 loudness cases (integrated loudness within ±0.1 LU)', () => {
  const cases: Array<[string, string[]]> = [
    ['1: stereo −23 dBFS, 20 s', stereoSegments([[-23, 20]])],
    ['2: stereo −33 dBFS, 20 s', stereoSegments([[-33, 20]])],
    ['3: −36 / −23 / −36 dBFS for 10 / 60 / 10 s', stereoSegments([[-36, 10], [-23, 60], [-36, 10]])],
    ['4: −72 / −36 / −23 / −36 / −72 dBFS for 10 / 10 / 60 / 10 / 10 s', stereoSegments([[-72, 10], [-36, 10], [-23, 60], [-36, 10], [-72, 10]])],
    ['5: −26 / −20 / −26 dBFS for 20 / 20.1 / 20 s', stereoSegments([[-26, 20], [-20, 20.1], [-26, 20]])],
    ['6: 5.0, L and R −28, C −24, Ls and Rs −30 dBFS, 20 s', ['-f', 'lavfi', '-i', `aevalsrc=${[sineAt(-28), sineAt(-28), sineAt(-24), sineAt(-30), sineAt(-30)].join('|')}:s=48000:d=20:c=5.0`]],
  ];
  const expected = [-23, -33, -23, -23, -23, -23];
  for (const [i, [name, args]] of cases.entries()) {
    it(`case ${name}`, async () => {
      const file = await makeAudioFile(`case${i + 1}.wav`, [...args, ...pcm24]);
      const { audio } = await analyse(file);
      expect(Math.abs(audio.loudness.integratedLufs - expected[i])).toBeLessThanOrEqual(0.1);
    });
  }
});

describe('analysis of generated files', () => {
  it('measures a 24-bit WAV exactly, and makes AAC and 24-bit FLAC renditions and peaks', async () => {
    const file = await makeAudioFile('tone.wav', ['-f', 'lavfi', '-i', `aevalsrc=${sineAt(-6)}|${sineAt(-6)}:s=48000:d=7.5:c=stereo`, ...pcm24]);
    const result = await analyse(file);
    expect(result.duration).toBe(7.5);
    expect(result.audio).toMatchObject({
      codec: 'pcm_s24le', container: 'wav', sampleRate: 48000, bitDepth: 24, channels: 2, lossless: true,
      renditions: ['original', 'compressed', 'lossless'], peaks: { pixelsPerSecond: 100, samplesPerPixel: 480, length: 750 },
    });
    expect(result.audio.bitRate).toBe(Math.round(((await stat(file)).size * 8) / 7.5));
    // A −6 dBFS sine peaks at −6 dBTP (tolerance −0.4 / +0.2).
    expect(result.audio.loudness.truePeakDbtp).toBeGreaterThanOrEqual(-6.4);
    expect(result.audio.loudness.truePeakDbtp).toBeLessThanOrEqual(-5.8);
    const compressed = await tools.probe(result.files.compressed);
    expect(compressed.streams[0]).toMatchObject({ codec_name: 'aac', sample_rate: '48000', channels: 2 });
    expect(compressed.format.format_name).toContain('mp4');
    expect(Number(compressed.streams[0].bit_rate ?? compressed.format.bit_rate)).toBeGreaterThan(200_000);
    const lossless = await tools.probe(result.files.lossless!);
    expect(lossless.streams[0]).toMatchObject({ codec_name: 'flac', sample_rate: '48000', bits_per_raw_sample: '24', channels: 2 });
    expect(Number(lossless.format.duration)).toBeCloseTo(7.5, 2);
    const json = JSON.parse(result.peaks.json.toString());
    expect(json).toMatchObject({ version: 2, channels: 1, sample_rate: 48000, samples_per_pixel: 480, bits: 8, length: 750 });
    // A −6 dBFS sine reaches half of full scale: 8-bit peaks of about ±64.
    expect(Math.max(...json.data)).toBeGreaterThanOrEqual(62);
    expect(Math.min(...json.data)).toBeLessThanOrEqual(-63);
    expect(result.peaks.dat.length).toBe(24 + 1500);
    expect([result.peaks.dat.readInt32LE(0), result.peaks.dat.readUInt32LE(4), result.peaks.dat.readInt32LE(8), result.peaks.dat.readInt32LE(12), result.peaks.dat.readUInt32LE(16)]).toEqual([2, 1, 48000, 480, 750]);
  });

  it('reads an MP3 of exactly 5 s as 5.00 s (not the container\'s padded length), with its ID3 tags and ISRC', async () => {
    const file = await makeAudioFile('song.mp3', [
      '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100:duration=5', '-c:a', 'libmp3lame', '-b:a', '192k',
      '-metadata', 'title=Night Drive', '-metadata', 'artist=The Late Shift', '-metadata', 'album=Spring EP', '-metadata', 'ISRC=GBAYE2600001',
    ]);
    const result = await analyse(file);
    expect(result.duration).toBe(5);
    expect(result.audio).toMatchObject({ codec: 'mp3', lossless: false, sampleRate: 44100, channels: 1, renditions: ['original', 'compressed'] });
    expect(result.audio).not.toHaveProperty('bitDepth');
    expect(result.audio.tags).toEqual({ title: 'Night Drive', artist: 'The Late Shift', album: 'Spring EP', isrc: 'GBAYE2600001', artwork: false });
    expect(result.files.lossless).toBeUndefined();
  });

  it('reads tags of a 24-bit FLAC, an M4A and an Opus file, and refuses an ISRC that is not valid', async () => {
    const tone = ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=2'];
    const flac = await analyse(await makeAudioFile('a.flac', [...tone, '-c:a', 'flac', '-sample_fmt', 's32', '-bits_per_raw_sample', '24', '-metadata', 'title=Flac Song', '-metadata', 'ISRC=USRC17607839']));
    expect(flac.audio).toMatchObject({ codec: 'flac', bitDepth: 24, lossless: true, tags: { title: 'Flac Song', isrc: 'USRC17607839' }, renditions: ['original', 'compressed', 'lossless'] });
    // ffmpeg's M4A writer keeps a custom ISRC tag only with use_metadata_tags.
    const m4a = await analyse(await makeAudioFile('a.m4a', [...tone, '-c:a', 'aac', '-b:a', '128k', '-movflags', 'use_metadata_tags', '-metadata', 'title=M4A Song', '-metadata', 'ISRC=not-an-isrc']));
    expect(m4a.audio).toMatchObject({ codec: 'aac', lossless: false, tags: { title: 'M4A Song' } });
    expect(m4a.audio.tags).not.toHaveProperty('isrc');
    const opus = await analyse(await makeAudioFile('a.opus', [...tone, '-c:a', 'libopus', '-b:a', '96k', '-metadata', 'artist=Opus Artist']));
    expect(opus.audio).toMatchObject({ codec: 'opus', sampleRate: 48000, tags: { artist: 'Opus Artist' } });
    expect(opus.duration).toBe(2);
  });

  it('does not take a WAV\'s RIFF INFO "ISRC" (which means source) for the recording code', async () => {
    const file = await makeAudioFile('info.wav', ['-f', 'lavfi', '-i', 'sine=duration=1', '-metadata', 'ISRC=GBAYE2600001', '-c:a', 'pcm_s16le']);
    const { audio } = await analyse(file);
    expect(audio.tags).not.toHaveProperty('isrc');
    // The file does carry the field, where ffprobe reports it as a tag named ISRC.
    expect((await tools.probe(file)).format.tags?.ISRC).toBe('GBAYE2600001');
  });

  it('handles eight channels and 192 kHz / 32-bit float: compressed to stereo 48 kHz, no lossless rendition for float', async () => {
    const eight = await analyse(await makeAudioFile('eight.wav', ['-f', 'lavfi', '-i', `aevalsrc=${Array(8).fill(sineAt(-20)).join('|')}:s=48000:d=2:c=7.1`, '-c:a', 'pcm_s16le']));
    expect(eight.audio).toMatchObject({ channels: 8, renditions: ['original', 'compressed', 'lossless'] });
    expect((await tools.probe(eight.files.compressed)).streams[0].channels).toBe(2);
    const float = await analyse(await makeAudioFile('hires.wav', ['-f', 'lavfi', '-i', `aevalsrc=${sineAt(-12)}|${sineAt(-12)}:s=192000:d=2:c=stereo`, '-c:a', 'pcm_f32le']));
    expect(float.audio).toMatchObject({ codec: 'pcm_f32le', sampleRate: 192000, bitDepth: 32, lossless: true, renditions: ['original', 'compressed'] });
    expect(float.duration).toBe(2);
    expect((await tools.probe(float.files.compressed)).streams[0].sample_rate).toBe('48000');
  });

  it('refuses what is not audio, and an empty file, as undecodable', async () => {
    const { writeFile } = await import('node:fs/promises');
    const dir = workDir();
    const pdf = join(dir, 'lyrics.wav');
    await writeFile(pdf, '%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n'.repeat(50));
    await expect(analyse(pdf)).rejects.toBeInstanceOf(UndecodableError);
    const empty = join(dir, 'empty.mp3');
    await writeFile(empty, '');
    await expect(analyse(empty)).rejects.toBeInstanceOf(UndecodableError);
  });

  it('reads what a truncated file holds', async () => {
    const { readFile, writeFile } = await import('node:fs/promises');
    const whole = await readFile(await makeAudioFile('whole.wav', ['-f', 'lavfi', '-i', 'sine=sample_rate=48000:duration=4', '-c:a', 'pcm_s16le']));
    const cut = join(workDir(), 'cut.wav');
    // Keep the header and the first second (48000 samples × 2 bytes).
    await writeFile(cut, whole.subarray(0, 44 + 96000));
    const result = await analyse(cut);
    expect(result.duration).toBe(1);
  });
});
