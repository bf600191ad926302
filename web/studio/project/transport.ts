/**
 * How a file's bytes reach the project: one small interface, so that the
 * upload queue (uploads.ts) does not know which protocol carries them.
 *
 * This transport is the interface's two steps: *Request an upload URL*
 * (which makes the file box, and stacks it by its version marker on the
 * server) then one PUT of the bytes to the signed URL, through
 * XMLHttpRequest, the one browser API that reports an upload's progress.
 * A PUT cut by the network cannot resume: the file box that waited for it is
 * deleted, and Retry starts again.
 */
import { answer, type Studio } from '../api.ts';

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
  /** The account's preference, when the server has one (User.autoStack). */
  autoStack?: boolean;
}

export interface RunningUpload {
  /** Stops the upload and removes what the server kept of it. */
  cancel(): void;
}

export interface Transport {
  start(request: UploadRequest, callbacks: TransportCallbacks): RunningUpload;
}

const UNREACHABLE = 'The connection was lost. Check it, then press Retry.';

/** A MIME type the API accepts (boxes.yaml MimeType): the browser's, else by the file's extension, else bytes. */
export function mimeTypeOf(file: File): string {
  if (/^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/.test(file.type)) return file.type;
  const extension = file.name.split('.').pop()?.toLowerCase();
  const known: Record<string, string> = { wav: 'audio/wav', flac: 'audio/flac', mp3: 'audio/mpeg', m4a: 'audio/mp4', aac: 'audio/aac', ogg: 'audio/ogg', opus: 'audio/ogg', aif: 'audio/aiff', aiff: 'audio/aiff' };
  return (extension && known[extension]) || 'application/octet-stream';
}

export function putTransport(studio: Studio): Transport {
  return {
    start({ projectid, file, parentid, autoStack }, callbacks) {
      let xhr: XMLHttpRequest | undefined;
      let boxid: string | undefined;
      let stopped = false;
      const forget = () => {
        // The file box waited for these bytes: it goes, so no empty file stays in the project.
        if (boxid) void answer(studio.client.DELETE('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: boxid } } }), true);
      };
      void (async () => {
        const body = { name: file.name, mimeType: mimeTypeOf(file), size: file.size, ...(parentid ? { parentid } : {}), ...(autoStack === undefined ? {} : { autoStack }) };
        const made = await answer(studio.client.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: body as { name: string; mimeType: string; size: number } }));
        if (stopped) {
          if (made.ok) {
            boxid = made.data.boxid;
            forget();
          }
          return;
        }
        if (!made.ok) return callbacks.onError(made.refusal.detail);
        boxid = made.data.boxid;
        const request = new XMLHttpRequest();
        xhr = request;
        request.open('PUT', made.data.url);
        for (const [name, value] of Object.entries(made.data.headers)) if (value !== undefined) request.setRequestHeader(name, value);
        request.upload.addEventListener('progress', (event) => callbacks.onProgress(event.loaded, event.lengthComputable ? event.total : file.size));
        request.addEventListener('load', () => {
          if (request.status >= 200 && request.status < 300) return callbacks.onSuccess(made.data.boxid);
          let detail = `The server refused the upload (${request.status}).`;
          try {
            detail = (JSON.parse(request.responseText) as { detail?: string }).detail ?? detail;
          } catch {}
          forget();
          callbacks.onError(detail);
        });
        request.addEventListener('error', () => {
          forget();
          callbacks.onError(UNREACHABLE);
        });
        request.send(file);
      })();
      return {
        cancel() {
          stopped = true;
          xhr?.abort();
          forget();
        },
      };
    },
  };
}
