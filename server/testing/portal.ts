/** A small tus 1.0.0 client for the portal's tests: each request as the protocol spells it, and a PATCH the test sends piece by piece and can cut. */
import { request } from 'node:http';

export interface PortalFile {
  size: number;
  filename: string;
  filetype?: string;
  name?: string;
  email?: string;
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** Upload-Metadata: comma-separated "key base64value" pairs (tus 1.0.0). */
export function uploadMetadata(fields: Record<string, string | undefined>): string {
  return Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key} ${b64(value!)}`)
    .join(',');
}

export const tusEndpoint = (apiUrl: string, playerId: string) => `${apiUrl}/portal/${playerId}/tus`;

/** POST: creates an upload; answers the response (its Location is the upload's URL). */
export function createPortalUpload(apiUrl: string, playerId: string, file: PortalFile): Promise<Response> {
  return fetch(tusEndpoint(apiUrl, playerId), {
    method: 'POST',
    headers: {
      'Tus-Resumable': '1.0.0',
      'Upload-Length': String(file.size),
      'Upload-Metadata': uploadMetadata({ filename: file.filename, filetype: file.filetype, name: file.name, email: file.email }),
    },
  });
}

/** POST, and the upload's URL; fails the test with the problem when refused. */
export async function startPortalUpload(apiUrl: string, playerId: string, file: PortalFile): Promise<string> {
  const res = await createPortalUpload(apiUrl, playerId, file);
  if (res.status !== 201) throw new Error(`creation refused: ${res.status} ${await res.text()}`);
  return res.headers.get('location')!;
}

/** PATCH with the whole body at once. */
export function patchUpload(url: string, offset: number, bytes: Buffer): Promise<Response> {
  return fetch(url, {
    method: 'PATCH',
    headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' },
    body: new Uint8Array(bytes),
  });
}

export function headUpload(url: string): Promise<Response> {
  return fetch(url, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0' } });
}

export type PatchOutcome = { status: number; body: string } | { error: Error };

/**
 * A PATCH whose body the test sends piece by piece (Content-Length the rest
 * of the file), as a client on a slow line does; `cut` drops the connection
 * mid-body. `outcome` never rejects.
 */
export function streamedPatch(url: string, offset: number, length: number, extra: Record<string, string> = {}) {
  return streamedRequest(url, 'PATCH', { ...extra, 'Tus-Resumable': '1.0.0', 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream', 'Content-Length': String(length) });
}

/** A creation that carries the file's bytes (tus creation-with-upload), sent piece by piece like streamedPatch. */
export function streamedCreation(apiUrl: string, playerId: string, file: PortalFile) {
  return streamedRequest(tusEndpoint(apiUrl, playerId), 'POST', {
    'Tus-Resumable': '1.0.0',
    'Upload-Length': String(file.size),
    'Upload-Metadata': uploadMetadata({ filename: file.filename, filetype: file.filetype, name: file.name, email: file.email }),
    'Content-Type': 'application/offset+octet-stream',
    'Content-Length': String(file.size),
  });
}

export function streamedRequest(url: string, method: string, headers: Record<string, string>) {
  const target = new URL(url);
  const req = request({ host: target.hostname, port: target.port, path: target.pathname, method, headers, agent: false });
  const outcome = new Promise<PatchOutcome>((resolve) => {
    req.on('error', (error) => resolve({ error }));
    req.on('response', async (res) => {
      const chunks: Buffer[] = [];
      try {
        for await (const chunk of res) chunks.push(chunk);
      } catch (error) {
        return resolve({ error: error as Error });
      }
      resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() });
    });
  });
  req.flushHeaders();
  return {
    outcome,
    send: (bytes: Buffer) =>
      new Promise<boolean>((resolve) => {
        if (req.destroyed) return resolve(false);
        if (req.write(bytes)) return resolve(true);
        req.once('drain', () => resolve(true));
        req.once('close', () => resolve(false));
      }),
    end: () => req.end(),
    cut: () => req.destroy(),
  };
}

/** The server's offset of an upload, read with HEAD once the server has settled what a cut PATCH left. */
export async function serverOffset(url: string): Promise<number> {
  const res = await headUpload(url);
  if (res.status !== 200) throw new Error(`HEAD answered ${res.status}`);
  return Number(res.headers.get('upload-offset'));
}
