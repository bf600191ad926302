/**
 * The HTTP rules of the download endpoint, as pure functions: what a blob is
 * served as (inline, or an opaque attachment), the headers every download
 * answer carries, the Content-Disposition filename (RFC 6266), the byte range
 * (RFC 9110 section 14) and If-None-Match (RFC 9110 section 13.1.2).
 */
import contentDisposition from 'content-disposition';
import fresh from 'fresh';
import rangeParser from 'range-parser';
import type { Disposition } from '../../signing/signed-downloads.ts';

/**
 * Sent on every answer of the download endpoint: 200, 206, 304 and errors.
 *
 * Download URLs are on the API's own origin and serve what users uploaded,
 * so a stored file must never become a page of that origin:
 * - `nosniff`: the browser takes the Content-Type we send as final and never
 *   guesses HTML or script from the bytes.
 * - `sandbox; default-src 'none'`: should anything still be rendered as a
 *   document, it runs in an opaque origin with no script, no plugins, no
 *   forms and no subresources, so it can neither read the origin's data nor
 *   call the API as the user.
 * - `Cross-Origin-Resource-Policy: cross-origin`: players embedded on other
 *   origins (partners' sites, the player page behind another host name) load
 *   these URLs with <audio> and <img>, which are no-cors requests that a
 *   `same-origin` policy would make the browser block. The URL itself is the
 *   credential (signed, expiring), and what it serves is media or an opaque
 *   attachment, so letting other origins embed it discloses nothing the URL's
 *   holder does not have already.
 */
export const DOWNLOAD_SAFETY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "sandbox; default-src 'none'",
  'Cross-Origin-Resource-Policy': 'cross-origin',
};

/** The type and disposition a download goes out with. */
export interface Presentation {
  disposition: Disposition;
  contentType: string;
}

/** Anything not on the inline allow-list: a download the browser saves, never renders. */
export const OPAQUE_ATTACHMENT: Readonly<Presentation> = { disposition: 'attachment', contentType: 'application/octet-stream' };

/**
 * The inline allow-list. `allowListedType` is the type of the bytes when they
 * are on it: audio or an artwork image recognised by their magic numbers, or a
 * rendition or peaks file we made ourselves. The URL's disposition is honoured
 * only then; everything else, whatever type its uploader declared and
 * whatever the URL asks, is an attachment of application/octet-stream.
 */
export function presentation(requested: Disposition, allowListedType: string | undefined): Presentation {
  return allowListedType ? { disposition: requested, contentType: allowListedType } : OPAQUE_ATTACHMENT;
}

// C0 and C1 controls, line and paragraph separators, and the bidirectional
// formatting marks that can make "evil\u202Evaw.exe" display as "evilexe.wav".
const INVISIBLE = /[\p{Cc}\p{Zl}\p{Zp}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/**
 * A file name safe to offer for saving: no path separators (`/`, `\`), no
 * `.` or `..` segments, no control or bidirectional formatting characters,
 * and no leading dots that would make a hidden file. Segments of a path are
 * joined with `_`, so `../../../../etc/passwd` becomes `etc_passwd`.
 */
export function safeFilename(name: string): string {
  const segments = name
    .replace(INVISIBLE, '')
    .split(/[/\\]+/)
    .map((segment) => segment.trim())
    .filter((segment) => segment !== '' && !/^\.+$/.test(segment));
  return segments.join('_').replace(/^[.\s]+/, '') || 'download';
}

/**
 * RFC 6266 section 4.3: `filename` for recipients that know only that, here
 * plain printable ASCII without quotes; and when that is not the exact name,
 * `filename*` (RFC 8187, UTF-8) with it, which section 4.3 says recipients
 * prefer ("when both filename and filename* are present ... pick filename*").
 */
export function dispositionHeader(disposition: Disposition, name: string): string {
  const filename = safeFilename(name);
  const fallback = filename.replace(/[^\x20-\x7e]/g, '_').replace(/"/g, '_');
  return contentDisposition(filename, { type: disposition, fallback });
}

/**
 * The one byte range to send, per RFC 9110 section 14, or undefined to send
 * the whole file, or 'unsatisfiable' for a 416.
 * - A unit other than `bytes`: section 14.2, "An origin server MUST ignore a
 *   Range header field that contains a range unit it does not understand."
 * - Several ranges (after merging overlapping ones), or a malformed header,
 *   or a spec whose last position is below its first (section 14.1.1: "A
 *   byte-range-spec is invalid if the last-pos value is present and less than
 *   the first-pos"): section 14.2, "A server MAY ignore the Range header field".
 * - No range overlapping the file: section 15.5.17, 416.
 */
export function byteRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const equals = header.indexOf('=');
  if (equals < 0 || header.slice(0, equals).trim().toLowerCase() !== 'bytes') return undefined;
  const specs = header.slice(equals + 1).split(',');
  if (specs.some(isInvertedSpec)) return undefined;
  // Section 14.1.3: "If the selected representation is shorter than the
  // specified suffix-length, the entire representation is used." range-parser
  // would call such a suffix unsatisfiable, so it gets the whole length.
  const clamped = specs.map((spec) => spec.replace(/^\s*-\s*(\d+)\s*$/, (whole, suffix: string) => (Number(suffix) > size ? `-${size}` : whole)));
  const ranges = rangeParser(size, `bytes=${clamped.join(',')}`, { combine: true });
  if (ranges === -2) return undefined;
  if (ranges === -1) return 'unsatisfiable';
  if (ranges.length !== 1) return undefined;
  return { start: ranges[0].start, end: ranges[0].end };
}

function isInvertedSpec(spec: string): boolean {
  const match = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(spec);
  return !!match && Number(match[2]) < Number(match[1]);
}

/**
 * RFC 9110 section 13.1.2: If-None-Match is false, so a GET answers 304, when
 * it is `*` or lists a tag that matches the current ETag by weak comparison.
 * Only that header is handed to `fresh`: a request's Cache-Control speaks to
 * caches, not to the origin's evaluation of the condition.
 */
export function isNotModified(ifNoneMatch: string | undefined, etag: string): boolean {
  return !!ifNoneMatch && fresh({ 'if-none-match': ifNoneMatch }, { etag });
}
