/**
 * What an upload portal accepts from a stranger: the kinds of file, checked
 * by the declared type (or the name's extension) before a byte is sent and
 * by the first bytes once they are stored, and the uploader's name and email.
 */
import { sniffAudioType } from '../../lib/content-sniffing.ts';
import { badRequest, unsupportedMediaType } from '../../lib/problems.ts';
import { isAudioFile } from '../processing/processing.ts';

/** The kinds a portal takes besides audio: what artists and their clients send with it (archives of stems, documents). */
const OTHER_KINDS: Array<{ kind: string; types: string[]; extensions: RegExp; magic?: (head: Buffer) => boolean }> = [
  {
    kind: 'a ZIP archive',
    types: ['application/zip', 'application/x-zip-compressed', 'application/x-zip'],
    extensions: /\.zip$/i,
    // PKWARE APPNOTE 4.3.7: a local file header starts "PK\x03\x04"; an empty archive is only its end record, "PK\x05\x06".
    magic: (head) => head.subarray(0, 4).equals(Buffer.from('PK\x03\x04', 'latin1')) || head.subarray(0, 4).equals(Buffer.from('PK\x05\x06', 'latin1')),
  },
  {
    kind: 'a 7-Zip archive',
    types: ['application/x-7z-compressed'],
    extensions: /\.7z$/i,
    magic: (head) => head.subarray(0, 6).equals(Buffer.from([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c])),
  },
  { kind: 'a RAR archive', types: ['application/vnd.rar', 'application/x-rar-compressed', 'application/x-rar'], extensions: /\.rar$/i, magic: (head) => head.subarray(0, 6).toString('latin1') === 'Rar!\x1a\x07' },
  { kind: 'a gzip file', types: ['application/gzip', 'application/x-gzip'], extensions: /\.(gz|tgz)$/i, magic: (head) => head[0] === 0x1f && head[1] === 0x8b },
  // RFC 8089 is silent; PDF 1.7 (ISO 32000-1) 7.5.2: "The first line of a PDF file shall be a header consisting of the 5 characters %PDF-".
  { kind: 'a PDF document', types: ['application/pdf'], extensions: /\.pdf$/i, magic: (head) => head.subarray(0, 5).toString('latin1') === '%PDF-' },
  { kind: 'a text file', types: ['text/plain', 'text/markdown'], extensions: /\.(txt|md)$/i },
  {
    kind: 'a word-processor document',
    types: ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'application/vnd.oasis.opendocument.text', 'application/rtf', 'text/rtf'],
    extensions: /\.(docx|odt|rtf)$/i,
  },
  { kind: 'a MIDI file', types: ['audio/midi', 'audio/x-midi'], extensions: /\.(mid|midi)$/i, magic: (head) => head.subarray(0, 4).toString('latin1') === 'MThd' },
];

/** Types a browser sends when it does not know the file's: the name's extension decides then. */
const UNKNOWN_TYPES = new Set(['', 'application/octet-stream']);

export const ACCEPTED_DESCRIPTION = 'audio (WAV, AIFF, FLAC, MP3, AAC/M4A, Ogg, Opus, CAF, Wave64), ZIP, 7-Zip, RAR or gzip archives, PDF, text, Word or OpenDocument documents, and MIDI';

export interface AcceptedFile {
  /** The type to store the file under: the declared one, or one the extension implies. */
  mimeType: string;
  audio: boolean;
  /** Checks the stored first bytes against the kind; undefined when that kind has no cheap signature. */
  check?: (head: Buffer) => string | undefined;
}

/**
 * Whether the portal takes a file of this name and declared type; refuses
 * with 415 and the list of what it takes. Audio is judged as everywhere else
 * (isAudioFile); MIDI is a score, not sound, and is checked before it.
 */
export function acceptFile(name: string, declaredType: string): AcceptedFile {
  const type = declaredType.split(';')[0].trim().toLowerCase();
  const unknown = UNKNOWN_TYPES.has(type);
  const other = OTHER_KINDS.find((kind) => (unknown ? kind.extensions.test(name) : kind.types.includes(type)));
  if (other) {
    const magic = other.magic;
    return {
      mimeType: unknown ? other.types[0] : type,
      audio: false,
      check: magic && ((head) => (magic(head) ? undefined : `The file's bytes are not ${other.kind}, as its type or name says.`)),
    };
  }
  if (isAudioFile(name, unknown ? null : type) && (unknown || type.startsWith('audio/'))) {
    return {
      mimeType: unknown ? 'application/octet-stream' : type,
      audio: true,
      check: (head) => (sniffAudioType(head) ? undefined : 'The file\'s bytes are not audio in a format we know (WAV, AIFF, FLAC, MP3, AAC/M4A, Ogg, Opus, CAF, Wave64), though its type or name says audio.'),
    };
  }
  throw unsupportedMediaType(`${JSON.stringify(name)} (${type || 'no type'}) is not a kind of file this portal takes. It takes ${ACCEPTED_DESCRIPTION}.`);
}

/** The uploader, as typed on the portal page: a name is required, an email optional; bidi controls are removed from both. */
export interface Uploader {
  name: string;
  email: string | null;
}

// Control characters have no place in a name shown to the project's members (and U+0000 none in the database).
const CONTROL = /\p{Cc}/u;
/**
 * Unicode's bidirectional formatting characters (UAX #9, "Explicit
 * Directional Embeddings/Overrides/Isolates", and the implicit marks
 * LRM U+200E, RLM U+200F, ALM U+061C): invisible, they reorder what follows,
 * so that "invoice\u202Ecod.exe" shows as "invoiceexe.doc". Removed from
 * what a stranger names: the file and themselves.
 */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/gu;
export const withoutBidiControls = (text: string) => text.replace(BIDI_CONTROLS, '');

// A plain check (something@something.tld): the address is shown to members, never mailed by the server.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function checkUploader(name: string | null | undefined, email: string | null | undefined): Uploader {
  const trimmed = withoutBidiControls(name ?? '').trim();
  if (!trimmed) throw badRequest('Type your name: the project\'s members see it beside the files you send.', [{ header: 'upload-metadata', detail: 'name is required' }]);
  if (trimmed.length > 200 || CONTROL.test(trimmed)) throw badRequest('Your name must be at most 200 characters, without control characters.', [{ header: 'upload-metadata', detail: 'name is not valid' }]);
  const address = withoutBidiControls(email ?? '').trim() || null;
  if (address !== null && (address.length > 320 || !EMAIL.test(address) || CONTROL.test(address))) {
    throw badRequest(`${JSON.stringify(address.slice(0, 100))} is not an email address. Give one such as you@example.com, or leave it empty.`, [{ header: 'upload-metadata', detail: 'email is not valid' }]);
  }
  return { name: trimmed, email: address };
}

/** The file's name, as it will be shown: required, at most 255 characters, no control characters or path, bidi controls removed. */
export function checkFileName(filename: string | null | undefined): string {
  const name = withoutBidiControls(filename ?? '').trim();
  if (!name || name.length > 255 || CONTROL.test(name) || /[/\\]/.test(name)) {
    throw badRequest('Upload-Metadata must carry the file\'s name (filename) without a path or control characters, at most 255 characters.', [
      { header: 'upload-metadata', detail: 'filename is missing or not valid' },
    ]);
  }
  return name;
}
