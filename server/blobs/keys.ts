/**
 * The blob key layout, in one place. Every key the server writes or reads is
 * made here, so that the layout can change (or move to another backend, such
 * as an S3 bucket) without hunting for string templates. Tests use these too,
 * never literal paths.
 *
 *   projects/<projectId>/files/<boxId>                 the original bytes of a file box
 *   projects/<projectId>/renditions/<boxId>/<variant>  a rendition or the peaks of a file
 *   projects/<projectId>/artwork/<artworkId>           an artwork image
 *
 * parseBlobKey reads a key back, for the sweep that removes blobs no record
 * points at any more.
 */

/** What the audio pipeline derives from a file: renditions and waveform peaks. */
export type Variant = 'compressed' | 'lossless' | 'peaks-json' | 'peaks-dat';
export const VARIANT_NAMES: readonly Variant[] = ['compressed', 'lossless', 'peaks-json', 'peaks-dat'];

/** Where the blobs of one project live; listing under it finds all of them. */
export const projectBlobPrefix = (projectId: string) => `projects/${projectId}/`;

/** The blob key of a file box's original bytes. */
export const fileBlobKey = (projectId: string, boxId: string) => `projects/${projectId}/files/${boxId}`;

/** The blob key of a rendition or the peaks of a file. */
export const renditionBlobKey = (projectId: string, boxId: string, variant: Variant) => `projects/${projectId}/renditions/${boxId}/${variant}`;

/** Every key derived from a file box: its original, then each variant. Deleting a file removes all of them. */
export const fileBlobKeys = (projectId: string, boxId: string) => [fileBlobKey(projectId, boxId), ...VARIANT_NAMES.map((variant) => renditionBlobKey(projectId, boxId, variant))];

/** The blob key of an artwork image. */
export const artworkBlobKey = (projectId: string, artworkId: string) => `projects/${projectId}/artwork/${artworkId}`;

/** Where every key of this layout starts: listing under it finds every blob the server keeps. */
export const ALL_PROJECTS_PREFIX = 'projects/';

/** What a key of this layout names. */
export type ParsedBlobKey =
  | { kind: 'file'; projectId: string; boxId: string }
  | { kind: 'rendition'; projectId: string; boxId: string; variant: Variant }
  | { kind: 'artwork'; projectId: string; artworkId: string };

/** The inverse of the key makers above; undefined for a key of any other shape, which nothing here made. */
export function parseBlobKey(key: string): ParsedBlobKey | undefined {
  const parts = key.split('/');
  if (parts[0] !== 'projects' || parts.some((part) => part === '')) return undefined;
  const [, projectId, area, id, variant] = parts;
  if (area === 'files' && parts.length === 4) return { kind: 'file', projectId, boxId: id };
  if (area === 'artwork' && parts.length === 4) return { kind: 'artwork', projectId, artworkId: id };
  if (area === 'renditions' && parts.length === 5 && (VARIANT_NAMES as readonly string[]).includes(variant)) {
    return { kind: 'rendition', projectId, boxId: id, variant: variant as Variant };
  }
  return undefined;
}
