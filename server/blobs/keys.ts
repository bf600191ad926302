/**
 * The blob key layout, in one place. Every key the server writes or reads is
 * made here, so that the layout can change (or move to another backend, such
 * as an S3 bucket) without hunting for string templates. Tests use these too,
 * never literal paths.
 *
 *   projects/<projectId>/files/<boxId>                 the original bytes of a file box
 *   projects/<projectId>/renditions/<boxId>/<variant>  a rendition or the peaks of a file
 *   projects/<projectId>/artwork/<artworkId>           an artwork image
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
