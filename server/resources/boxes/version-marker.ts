/**
 * Versions stack themselves (the studio's rules): "a file whose name, without its
 * extension, ends in a version marker (`v2`, `V3`, `version 4`, `take 5`,
 * `_2`, `-2`, `(2)`) joins the stack or file whose name is the rest, as its
 * newest version". This module is the pure rule: how a name splits into
 * its rest and its marker, and when two names are the same. Where the file
 * lands is decided by the service that creates file boxes
 * (uploads/file-boxes.ts), which every owner upload path goes through.
 */

/** The name without its extension: "Night Drive.wav" → "Night Drive". A name that is only an extension (".wav") keeps it. */
export function withoutExtension(name: string): string {
  const trimmed = name.trim();
  const dot = trimmed.lastIndexOf('.');
  // An extension is a short run of letters and digits after the last dot; "v2.5" or "Mr. Brightside" keep theirs.
  if (dot <= 0 || !/^[A-Za-z0-9]{1,10}$/.test(trimmed.slice(dot + 1)) || /^\d+$/.test(trimmed.slice(dot + 1))) return trimmed;
  return trimmed.slice(0, dot).trim();
}

/** The name of the stack an upload makes: the file's name without its extension, unless nothing would be left (".wav" stays ".wav"). */
export const stackNameFor = (fileName: string) => withoutExtension(fileName) || fileName;

/** What a versioned name splits into: "Night Drive - take 5.wav" → { rest: "Night Drive", marker: "take 5" }. */
export interface VersionMarker {
  /** The name of what the file is a version of: without extension, marker, nor the separators before the marker. */
  rest: string;
  /** The marker as written, which becomes the version name. */
  marker: string;
}

/** Spaces, underscores, hyphens and dots that may stand between a name and a word marker ("Night Drive - take 5", "Night_Drive_v2"). */
const SEPARATORS = /[\s_.-]+$/;

/**
 * The markers, tried in order on the name without its extension. A word
 * marker (`v2`, `version 4`, `take 5`) must follow a separator, so that
 * "Dev2" or "Retake3" are not read as versions; `_2` and `-2` carry their
 * own separator; `(2)` may follow a space or nothing ("Night Drive(2)").
 */
const MARKERS: RegExp[] = [
  /^(.*?[^\s_.-])[\s_.-]+((?:v|version\s*|take\s*)\d{1,4})$/i,
  /^(.*?[^\s_.-])\s*(\(\d{1,4}\))$/,
  /^(.*?[^\s_.-])\s*([_-]\d{1,4})$/,
];

/** The rest and the marker of a file name, or undefined when it ends in no version marker (or nothing is left before it). */
export function versionMarker(fileName: string): VersionMarker | undefined {
  const base = withoutExtension(fileName);
  for (const pattern of MARKERS) {
    const match = pattern.exec(base);
    if (!match) continue;
    const rest = match[1].replace(SEPARATORS, '').trim();
    if (rest !== '') return { rest, marker: match[2] };
  }
  return undefined;
}

/** Names compare "case-insensitively after trimming". */
export function sameName(a: string, b: string): boolean {
  return a.trim().toLocaleLowerCase('und') === b.trim().toLocaleLowerCase('und');
}
