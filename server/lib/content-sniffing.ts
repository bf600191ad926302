/**
 * What stored bytes are, by their magic numbers, never by the type a client
 * declared. The download endpoint serves `inline` only what these recognise
 * (audio, and the images artwork is checked against); everything else goes
 * out as an attachment of `application/octet-stream`. Recognising too little
 * is safe (a file is downloaded instead of played); recognising something as
 * audio or an image only ever labels it with a media type a browser will not
 * run as a document.
 */

/**
 * How many leading bytes the sniffers look at. The deepest signature is
 * Wave64's second GUID (bytes 24-39); 64 bytes also hold an MP4 `ftyp` box's
 * first compatible brands and a WebM/Matroska EBML header's DocType.
 */
export const SNIFF_HEAD_BYTES = 64;

const ascii = (head: Buffer, start: number, end: number) => (head.length >= end ? head.toString('latin1', start, end) : '');

/** Sony Wave64: the "riff" GUID (66666972-912E-11CF-A5D6-28DB04C10000) and, at byte 24, the "wave" GUID. */
const W64_RIFF = Buffer.from('726966662e91cf11a5d628db04c10000', 'hex');
const W64_WAVE = Buffer.from('77617665f3acd3118cd100c04f8edb8a', 'hex');

/**
 * ISO base media (MP4) brands whose files hold AAC/ALAC audio as an audio
 * player expects: iTunes audio and audiobooks, and the generic ISO/MP4 brands
 * ffmpeg and most encoders write. A video MP4 with these brands is still
 * only ever media; it is labelled audio/mp4 and an <audio> element plays its sound.
 */
const MP4_AUDIO_BRANDS = new Set(['M4A ', 'M4B ', 'M4P ', 'F4A ', 'F4B ', 'mp41', 'mp42', 'isom', 'iso2', 'iso3', 'iso4', 'iso5', 'iso6', 'dash', 'MSNV', '3gp4', '3gp5', '3gp6', '3g2a']);

/** The audio type the first bytes show (see SNIFF_HEAD_BYTES); undefined when they are not a container or stream we recognise. */
export function sniffAudioType(head: Buffer): string | undefined {
  const magic = ascii(head, 0, 4);
  const form = ascii(head, 8, 12);
  // RIFF/WAVE, and its 64-bit forms RF64 (EBU Tech 3306) and BW64 (ITU-R BS.2088): "WAVE" at byte 8.
  if ((magic === 'RIFF' || magic === 'RF64' || magic === 'BW64') && form === 'WAVE') return 'audio/wav';
  // IFF: "FORM", a 32-bit size, then the form type AIFF or AIFC (compressed AIFF).
  if (magic === 'FORM' && (form === 'AIFF' || form === 'AIFC')) return 'audio/aiff';
  if (magic === 'fLaC') return 'audio/flac';
  if (magic === 'OggS') return 'audio/ogg';
  // Core Audio Format: "caff" then file version 1.
  if (magic === 'caff') return 'audio/x-caf';
  if (head.length >= 40 && head.subarray(0, 16).equals(W64_RIFF) && head.subarray(24, 40).equals(W64_WAVE)) return 'audio/x-w64';
  if (ascii(head, 4, 8) === 'ftyp' && mp4HasAudioBrand(head)) return 'audio/mp4';
  // EBML header (Matroska, WebM): 0x1A45DFA3.
  if (head.length >= 4 && head.readUInt32BE(0) === 0x1a45dfa3) return matroskaType(head);
  // An ID3v2 tag ("ID3", then major version 2-4) in front of MPEG audio.
  if (magic.startsWith('ID3') && head.length >= 4 && head[3] >= 2 && head[3] <= 4) return 'audio/mpeg';
  if (head.length >= 4 && head[0] === 0xff) return frameSyncType(head);
  return undefined;
}

/** An audio type when the bytes are audio, else the image type artwork is checked against (JPEG, PNG, WebP, GIF), else undefined. */
export function sniffInlineMediaType(head: Buffer): string | undefined {
  return sniffAudioType(head) ?? sniffImageType(head);
}

/** The major brand at byte 8, or a compatible brand from byte 16 to the end of the `ftyp` box (as much of it as `head` holds). */
function mp4HasAudioBrand(head: Buffer): boolean {
  if (MP4_AUDIO_BRANDS.has(ascii(head, 8, 12))) return true;
  const boxEnd = Math.min(head.readUInt32BE(0), head.length);
  for (let at = 16; at + 4 <= boxEnd; at += 4) if (MP4_AUDIO_BRANDS.has(ascii(head, at, at + 4))) return true;
  return false;
}

/**
 * The EBML header's DocType element (ID 0x4282): "webm" or "matroska". Its
 * size is an EBML variable-length integer; DocTypes are short, so it is the
 * one-byte form (0x80 | length).
 */
function matroskaType(head: Buffer): string | undefined {
  const at = head.indexOf(Buffer.from([0x42, 0x82]), 4);
  if (at < 0 || at + 3 > head.length || (head[at + 2] & 0x80) === 0) return undefined;
  const docType = head.toString('latin1', at + 3, Math.min(head.length, at + 3 + (head[at + 2] & 0x7f)));
  if (docType === 'webm') return 'audio/webm';
  if (docType === 'matroska') return 'audio/x-matroska';
  return undefined;
}

/**
 * A frame header at byte 0 (no ID3 tag in front).
 * ADTS (ISO/IEC 13818-7, AAC): 12 sync bits, then layer "00"; the sampling
 * frequency index (4 bits) is below 13.
 * MPEG audio (ISO/IEC 11172-3, 13818-3; MP3 and MP2): 11 sync bits; version
 * "01" and layer "00" are reserved; bitrate index 1111 and sample-rate index
 * 11 are invalid. These reserved values tell frames from other data that
 * starts with 0xFF, such as a JPEG's FF D8 FF.
 */
function frameSyncType(head: Buffer): string | undefined {
  const [, b1, b2] = head;
  if ((b1 & 0xf6) === 0xf0) return ((b2 >> 2) & 0x0f) < 13 ? 'audio/aac' : undefined;
  if ((b1 & 0xe0) !== 0xe0) return undefined;
  const version = (b1 >> 3) & 0x03;
  const layer = (b1 >> 1) & 0x03;
  const bitrate = b2 >> 4;
  const sampleRate = (b2 >> 2) & 0x03;
  if (version === 0b01 || layer === 0b00 || bitrate === 0x0f || sampleRate === 0b11) return undefined;
  return 'audio/mpeg';
}

/** The image types artwork may have, and a check of the bytes that they are what they claim. */
export const ARTWORK_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/gif'];

/** The image type the first bytes (at least 12) show, by their magic numbers; undefined for anything else. */
export function sniffImageType(head: Buffer): string | undefined {
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.length >= 8 && head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (head.length >= 6 && /^GIF8[79]a$/.test(head.subarray(0, 6).toString('latin1'))) return 'image/gif';
  if (head.length >= 12 && head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return undefined;
}
