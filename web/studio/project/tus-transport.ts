/**
 * Resumable uploads for project members: tus 1.0.0 at
 * POST /projects/{projectid}/tus (createProjectUpload) and
 * HEAD/PATCH/DELETE …/tus/{uploadid}, with tus-js-client, as the upload
 * portal's page does (web/portal/main.ts).
 *
 * - A dropped connection is retried on its own (retryDelays), from the
 *   offset the server answers to HEAD; when the browser says it is back
 *   online (the `online` event), a waiting retry starts at once.
 * - After a reload, the same file chosen again finds its unfinished upload
 *   by its fingerprint (tus-js-client's: name, type, size, last change and
 *   endpoint) in localStorage, and resumes it.
 * - The file's box id comes back in the `Upload-File-Id` header of the
 *   last PATCH (or HEAD) once the bytes are all in.
 */
import { type DetailedError, type HttpResponse, Upload } from 'tus-js-client';
import type { Studio } from '../api.ts';
import { mimeTypeOf, type Transport } from './transport.ts';

/** Bytes per PATCH: a cut connection costs at most this much again. */
const CHUNK_BYTES = 8 * 1024 * 1024;
/** Waits before each retry of a failed request; the `online` event cuts a wait short. */
const RETRY_DELAYS = [0, 1000, 3000, 5000, 10_000, 20_000, 30_000, 60_000, 60_000, 60_000];

/** The problem's detail (RFC 9457) the server answered with, or what went wrong on the way. */
function explain(error: Error): string {
  const response = (error as DetailedError).originalResponse;
  const body = response?.getBody();
  if (body) {
    try {
      const problem = JSON.parse(body) as { detail?: string };
      if (problem.detail) return problem.detail;
    } catch {}
  }
  if (response) return `The server refused the upload (${response.getStatus()}).`;
  return 'The connection was lost and retrying did not help. Check your connection, then press Retry: the upload goes on where it stopped.';
}

export function tusTransport(studio: Studio): Transport {
  return {
    start({ projectid, file, parentid, autoStack }, callbacks) {
      const endpoint = new URL(`${studio.apiBase}/projects/${encodeURIComponent(projectid)}/tus`, window.location.href).href;
      const metadata: Record<string, string> = { filename: file.name, filetype: mimeTypeOf(file) };
      if (parentid) metadata.parentid = parentid;
      if (autoStack !== undefined) metadata.autoStack = String(autoStack);
      let fileid: string | undefined;
      const upload = new Upload(file, {
        endpoint,
        metadata,
        chunkSize: CHUNK_BYTES,
        retryDelays: RETRY_DELAYS,
        removeFingerprintOnSuccess: true,
        onAfterResponse(_request, response: HttpResponse) {
          fileid = response.getHeader('Upload-File-Id') || fileid;
        },
        onProgress: (sent, total) => callbacks.onProgress(sent, total),
        onSuccess() {
          window.removeEventListener('online', online);
          if (fileid) callbacks.onSuccess(fileid);
          else callbacks.onError('The server stored the file but did not say which it is. Reload the page to see it.');
        },
        onError(error) {
          window.removeEventListener('online', online);
          callbacks.onError(explain(error));
        },
      });
      // Back online: a retry waiting out its delay starts now (abort, then start again from the server's offset).
      const online = () => {
        void upload.abort(false).then(() => upload.start());
      };
      window.addEventListener('online', online);
      void upload.findPreviousUploads().then((previous) => {
        if (previous.length > 0) upload.resumeFromPreviousUpload(previous[0]);
        upload.start();
      });
      return {
        cancel() {
          window.removeEventListener('online', online);
          // terminate: the server drops the bytes so far (tus termination, cancelProjectUpload).
          void upload.abort(true).catch(() => {});
        },
      };
    },
  };
}
