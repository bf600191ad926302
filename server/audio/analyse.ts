/**
 * Analyses an audio file and makes its renditions in one ffmpeg pass: the
 * file is decoded once and fed to
 *   - the loudness meter (ebur128, EBU R128 / BS.1770, with true peak),
 *   - 16-bit mono samples on stdout, from which Node draws the waveform
 *     peaks and counts the samples for the exact duration,
 *   - the compressed rendition, AAC 256 kbit/s in M4A,
 *   - the lossless rendition, FLAC at the source's bit depth and sample
 *     rate, only when the source is lossless integer audio.
 * Format facts come from ffprobe, tags from music-metadata (ffprobe's tags
 * as the fallback).
 *
 * The thread that calls this serves requests too, so nothing here works
 * through the samples on it: they go to the waveform thread, in chunks of
 * 32 KiB, and the meter's printout is read line by line.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import type { Schemas } from '../lib/api-types.ts';
import { UndecodableError, type MediaTools, type ProbeResult } from './media-tools.ts';
import { drawWaveform, type Waveform } from './waveform.ts';

export interface AnalysisResult {
  /** Seconds, rounded to hundredths, from the decoded samples. */
  duration: number;
  audio: Schemas['AudioAnalysis'];
  files: { compressed: string; lossless?: string };
  peaks: { json: Buffer; dat: Buffer };
}

const LOSSLESS_CODECS = /^(pcm_|flac$|alac$|wavpack$|tta$|mlp$|truehd$)/;
const ISRC = /^[A-Z]{2}[A-Z0-9]{3}\d{7}$/;
/** FLAC holds integer samples of up to 24 bits here (ffmpeg 5.1 writes 32-bit FLAC only as experimental). */
const FLAC_MAX_BITS = 24;

/** Analyses `input`, writing its renditions into `workDir`. Aborting `signal` kills ffmpeg and rejects with its reason. */
export async function analyseAudio(tools: MediaTools, input: string, workDir: string, byteSize: number, signal?: AbortSignal): Promise<AnalysisResult> {
  const probe = await tools.probe(input, signal);
  const stream = probe.streams.find((candidate) => candidate.codec_type === 'audio');
  if (!stream) throw new UndecodableError('The file holds no audio stream.');
  const sampleRate = Number(stream.sample_rate);
  const channels = stream.channels ?? 0;
  if (!(sampleRate > 0) || !(channels > 0)) throw new UndecodableError('The audio stream has no sample rate or channels.');
  const codec = stream.codec_name;
  const lossless = LOSSLESS_CODECS.test(codec);
  const float = /^pcm_f/.test(codec) || /^flt|^dbl/.test(stream.sample_fmt ?? '');
  const bitDepth = codec.startsWith('pcm_') ? stream.bits_per_sample || undefined : codec === 'flac' ? Number(stream.bits_per_raw_sample) || undefined : undefined;
  const makeLossless = lossless && !float && bitDepth !== undefined && bitDepth <= FLAC_MAX_BITS;

  const files = { compressed: join(workDir, 'compressed.m4a'), lossless: makeLossless ? join(workDir, 'lossless.flac') : undefined };
  const loudnessFiles = { integrated: join(workDir, 'integrated.txt'), truePeak: join(workDir, 'true-peak.txt') };
  const printKey = (key: string, file: string) => `ametadata=mode=print:key=${key}:file=${file.replace(/[:\\']/g, '\\$&')}`;
  // One input, decoded once, feeding every output (ffmpeg decodes an input once for all the outputs that map it).
  const args = ['-i', input, '-map_metadata', '-1'];
  // Compressed: stereo at most and 48 kHz at most, which every player takes and AAC supports.
  args.push('-map', '0:a:0', '-c:a', 'aac', '-b:a', '256k');
  if (channels > 2) args.push('-ac', '2');
  if (sampleRate > 48000) args.push('-ar', '48000');
  args.push('-movflags', '+faststart', '-f', 'mp4', files.compressed);
  if (files.lossless) {
    args.push('-map', '0:a:0', '-c:a', 'flac', '-sample_fmt', bitDepth! > 16 ? 's32' : 's16');
    if (bitDepth! > 16) args.push('-bits_per_raw_sample', String(bitDepth));
    args.push('-f', 'flac', files.lossless);
  }
  // The meter: metadata=1 puts the running values on every frame; ametadata prints the two we keep, each to a file.
  args.push('-map', '0:a:0', '-af', `ebur128=peak=true:metadata=1,${printKey('lavfi.r128.I', loudnessFiles.integrated)},${printKey('lavfi.r128.true_peak', loudnessFiles.truePeak)}`, '-f', 'null', '-');
  // The samples for the peaks and the duration: 16-bit, mixed to one channel. On a pipe ffmpeg flushes after
  // every packet (flush_packets defaults to on for outputs that cannot seek), which makes tens of thousands of
  // tiny reads for the request thread; unflushed, it writes whole 32 KiB blocks.
  args.push('-map', '0:a:0', '-af', 'aformat=sample_fmts=s16:channel_layouts=mono', '-flush_packets', '0', '-f', 's16le', 'pipe:1');

  // Tags are read while ffmpeg works.
  const tagsRead = readTags(input, probe);
  const waveform = drawWaveform(sampleRate);
  let peaks: Waveform;
  try {
    await tools.ffmpeg(args, (chunk) => waveform.push(chunk), signal);
    peaks = await waveform.finish();
  } finally {
    waveform.cancel();
    // After a failed or aborted run, too, nothing may go on reading the input (readTags does not reject).
    await tagsRead;
  }
  if (peaks.samples === 0) throw new UndecodableError('The file decodes to no audio samples.');
  const loudness = await readLoudness(loudnessFiles.integrated, loudnessFiles.truePeak);
  const duration = Math.round((peaks.samples / sampleRate) * 100) / 100;

  return {
    duration,
    files,
    peaks,
    audio: {
      codec,
      container: probe.format.format_name,
      sampleRate,
      ...(bitDepth ? { bitDepth } : {}),
      channels,
      bitRate: Math.round((byteSize * 8) / Math.max(duration, 0.01)),
      lossless,
      loudness,
      tags: await tagsRead,
      renditions: makeLossless ? ['original', 'compressed', 'lossless'] : ['original', 'compressed'],
      peaks: { pixelsPerSecond: sampleRate / peaks.samplesPerPixel, samplesPerPixel: peaks.samplesPerPixel, length: peaks.length },
    },
  };
}

/**
 * The last integrated loudness ebur128 printed (its final value) and the
 * highest true peak, in dBTP. The printouts hold a line per 100 ms of audio
 * (6 MB each for three hours), so they are read line by line, not whole.
 */
async function readLoudness(integratedFile: string, truePeakFile: string): Promise<Schemas['AudioAnalysis']['loudness']> {
  let integrated: number | undefined;
  let peak = 0;
  for (const file of [integratedFile, truePeakFile]) {
    for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY })) {
      if (line.startsWith('lavfi.r128.I=')) integrated = Number(line.slice(13));
      else if (line.startsWith('lavfi.r128.true_peak=')) peak = Math.max(peak, Number(line.slice(21)));
    }
  }
  if (integrated === undefined || !Number.isFinite(integrated)) throw new UndecodableError('The loudness meter measured nothing.');
  // ebur128 reports true peak as a linear amplitude; silence has none, which is −∞ dBTP: report the meter's floor instead.
  const truePeakDbtp = peak > 0 ? Math.round(20 * Math.log10(peak) * 10) / 10 : -70;
  return { integratedLufs: integrated, truePeakDbtp };
}

async function readTags(input: string, probe: ProbeResult): Promise<Schemas['AudioAnalysis']['tags']> {
  const fallback = { ...probe.format.tags, ...probe.streams.find((stream) => stream.codec_type === 'audio')?.tags };
  const tag = (name: string) => Object.entries(fallback).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];
  let title: string | undefined, artist: string | undefined, album: string | undefined, isrc: string | undefined;
  let artwork = false;
  try {
    // Loaded at the first analysis, not at start (about 80 modules with its tokenizers).
    const { parseFile } = await import('music-metadata');
    const metadata = await parseFile(input, { duration: false, skipCovers: false });
    ({ title, artist, album } = metadata.common);
    artwork = (metadata.common.picture?.length ?? 0) > 0;
    if (probe.format.format_name === 'wav') {
      // In a WAV file the RIFF INFO field "ISRC" means *source*, not the recording code; only an ID3 TSRC counts.
      for (const [type, tags] of Object.entries(metadata.native)) {
        if (type.startsWith('ID3')) isrc ??= tags.find((t) => t.id === 'TSRC')?.value as string | undefined;
      }
    } else {
      isrc = metadata.common.isrc?.[0];
    }
  } catch {
    // music-metadata does not know every container; ffprobe's tags stand in.
  }
  title ??= tag('title');
  artist ??= tag('artist');
  album ??= tag('album');
  if (probe.format.format_name !== 'wav') isrc ??= tag('ISRC') ?? tag('TSRC');
  const cleanIsrc = isrc?.replace(/-/g, '').trim().toUpperCase();
  return {
    ...(title ? { title } : {}),
    ...(artist ? { artist } : {}),
    ...(album ? { album } : {}),
    ...(cleanIsrc && ISRC.test(cleanIsrc) ? { isrc: cleanIsrc } : {}),
    artwork,
  };
}

