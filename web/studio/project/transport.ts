/**
 * How a file's bytes reach the project: one small interface, so that the
 * upload queue (uploads.ts) does not know which protocol carries them. The
 * studio's is tus (tus-transport.ts): resumable, where a single PUT to a
 * signed URL would start again from nothing after a cut.
 */

export interface TransportCallbacks {
  onProgress(sent: number, total: number): void;
  /** The bytes are stored: `boxid` is the file's box. */
  onSuccess(boxid: string): void;
  onError(message: string): void;
}

export interface UploadRequest {
  projectid: string;
  file: File;
  /** A folder or stack to upload into; the top level without. */
  parentid?: string;
  /** The account's preference (User.autoStack); the server applies the account's own when this is left out. */
  autoStack?: boolean;
}

export interface RunningUpload {
  /** Stops the upload and removes what the server kept of it. */
  cancel(): void;
}

export interface Transport {
  start(request: UploadRequest, callbacks: TransportCallbacks): RunningUpload;
}

/** A MIME type the API accepts (boxes.yaml MimeType): the browser's, else by the file's extension, else bytes. */
export function mimeTypeOf(file: File): string {
  if (/^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/.test(file.type)) return file.type;
  const extension = file.name.split('.').pop()?.toLowerCase();
  const known: Record<string, string> = { wav: 'audio/wav', flac: 'audio/flac', mp3: 'audio/mpeg', m4a: 'audio/mp4', aac: 'audio/aac', ogg: 'audio/ogg', opus: 'audio/ogg', aif: 'audio/aiff', aiff: 'audio/aiff' };
  return (extension && known[extension]) || 'application/octet-stream';
}
