import { beforeAll, describe, expect, it } from 'vitest';
import { makeAudio } from '../testing/audio.ts';
import { SNIFF_HEAD_BYTES, sniffAudioType, sniffInlineMediaType } from './content-sniffing.ts';

const head = (bytes: Buffer) => bytes.subarray(0, SNIFF_HEAD_BYTES);
const tone = ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=0.2'];

describe('content sniffing', () => {
  // Real files from ffmpeg's muxers: [file name, codec arguments, the type we must see].
  const made: Array<[string, string[], string]> = [
    ['a.wav', ['-c:a', 'pcm_s16le'], 'audio/wav'],
    ['a.rf64.wav', ['-c:a', 'pcm_s16le', '-rf64', 'always'], 'audio/wav'],
    ['a.aiff', ['-c:a', 'pcm_s16be'], 'audio/aiff'],
    ['a.flac', ['-c:a', 'flac'], 'audio/flac'],
    ['a.ogg', ['-c:a', 'libopus'], 'audio/ogg'],
    ['a.mp3', ['-c:a', 'libmp3lame'], 'audio/mpeg'],
    ['bare.mp3', ['-c:a', 'libmp3lame', '-id3v2_version', '0', '-write_xing', '0'], 'audio/mpeg'],
    ['a.mp2', ['-c:a', 'mp2'], 'audio/mpeg'],
    ['a.m4a', ['-c:a', 'aac'], 'audio/mp4'],
    ['alac.m4a', ['-c:a', 'alac'], 'audio/mp4'],
    ['a.mp4', ['-c:a', 'aac'], 'audio/mp4'],
    ['a.aac', ['-c:a', 'aac', '-f', 'adts'], 'audio/aac'],
    ['a.caf', ['-c:a', 'pcm_s16le'], 'audio/x-caf'],
    ['a.w64', ['-c:a', 'pcm_s16le'], 'audio/x-w64'],
    ['a.webm', ['-c:a', 'libopus'], 'audio/webm'],
    ['a.mka', ['-c:a', 'flac'], 'audio/x-matroska'],
  ];
  const files = new Map<string, Buffer>();
  beforeAll(async () => {
    for (const [name, args] of made) files.set(name, await makeAudio(name, [...tone, ...args]));
  });

  it.each(made)('recognises %s from its first bytes', (name, _args, type) => {
    expect(sniffAudioType(head(files.get(name)!))).toBe(type);
    expect(sniffInlineMediaType(head(files.get(name)!))).toBe(type);
  });

  it('recognises the images artwork is checked against, and only those', () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const jpeg = Buffer.from('ffd8ffe000104a4649460001', 'hex');
    expect(sniffInlineMediaType(png)).toBe('image/png');
    expect(sniffInlineMediaType(jpeg)).toBe('image/jpeg');
    expect(sniffInlineMediaType(Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00', 'latin1'))).toBe('image/gif');
    expect(sniffInlineMediaType(Buffer.from('RIFF\x10\x00\x00\x00WEBPVP8 ', 'latin1'))).toBe('image/webp');
    // A JPEG starts with 0xFF like an MPEG frame; the reserved bits tell them apart.
    expect(sniffAudioType(jpeg)).toBeUndefined();
  });

  it('recognises nothing in documents a browser would run or render, whatever they claim', () => {
    const documents = [
      '<!doctype html><script>alert(1)</script>',
      '<html><body onload="alert(1)">',
      '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
      '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
      '%PDF-1.7\n1 0 obj',
      '{"version":2,"channels":1}',
      'ID3', // too short to carry a version
      'RIFF\x00\x00\x00\x00AVI LIST',
      'FORM\x00\x00\x00\x00ILBMBMHD',
      '\x00\x00\x00\x18ftypqt  \x00\x00\x02\x00qt  ',
      '',
    ];
    for (const text of documents) expect(sniffInlineMediaType(Buffer.from(text, 'latin1')), text).toBeUndefined();
    // Bytes 0xFF then invalid frame headers: MPEG with a reserved version, a bad bitrate, a bad sample rate; ADTS with bad sampling indexes.
    for (const hex of ['ffeb9000', 'fffbf000', 'fffb9c00', 'fff13c00', 'fff17400']) expect(sniffAudioType(Buffer.from(hex, 'hex')), hex).toBeUndefined();
  });

  it('reads hand-built headers of each kind', () => {
    const riff = (magic: string, form: string) => Buffer.concat([Buffer.from(magic), Buffer.alloc(4), Buffer.from(form)]);
    expect(sniffAudioType(riff('RIFF', 'WAVE'))).toBe('audio/wav');
    expect(sniffAudioType(riff('RF64', 'WAVE'))).toBe('audio/wav');
    expect(sniffAudioType(riff('BW64', 'WAVE'))).toBe('audio/wav');
    expect(sniffAudioType(riff('FORM', 'AIFC'))).toBe('audio/aiff');
    expect(sniffAudioType(Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'))).toBe('audio/mpeg');
    expect(sniffAudioType(Buffer.from('fffb9064', 'hex'))).toBe('audio/mpeg');
    expect(sniffAudioType(Buffer.from('fff15080', 'hex'))).toBe('audio/aac');
    // An MP4 whose major brand is not audio, but one of its compatible brands is.
    expect(sniffAudioType(Buffer.from('\x00\x00\x00\x1cftypabcd\x00\x00\x00\x00xyz M4A mp42', 'latin1'))).toBe('audio/mp4');
    const ebml = (docType: string) => Buffer.concat([Buffer.from('1a45dfa39f4286810142f7810142f2810442f381084282', 'hex'), Buffer.from([0x80 | docType.length]), Buffer.from(docType)]);
    expect(sniffAudioType(ebml('webm'))).toBe('audio/webm');
    expect(sniffAudioType(ebml('matroska'))).toBe('audio/x-matroska');
    expect(sniffAudioType(ebml('html'))).toBeUndefined();
  });
});
