import { Agent, request, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './testing/test-server.ts';
import { createApiClient, uploadHeaders } from '../generated/client.ts';
import { loadConfig } from './config.ts';
import { startServer } from './server.ts';
import { createLogger } from './lib/logger.ts';

const graceSeconds = 10;

/** A signed upload of `size` bytes, ready to PUT. */
async function uploadUrl(server: TestServer, size: number) {
  const token = await server.token('shutdown@example.com');
  const api = createApiClient({ baseUrl: server.apiUrl, token });
  const { data: project } = await api.POST('/projects', { body: { name: 'P' } });
  const { data: upload } = await api.POST('/projects/{projectid}/files', { params: { path: { projectid: project!.id } }, body: { name: 'slow.wav', mimeType: 'audio/wav', size } });
  return upload!;
}

/** Resolves when the server has the headers of a request with this method: it is under way. */
const requestArrives = (server: TestServer, method: string) =>
  new Promise<void>((arrived) => {
    const listener = (req: IncomingMessage) => {
      if (req.method !== method) return;
      server.http.off('request', listener);
      arrived();
    };
    server.http.on('request', listener);
  });

describe('graceful shutdown', () => {
  it('lets an upload under way finish, while refusing new connections', async () => {
    const server = await startTestServer('sqlite', { SHUTDOWN_GRACE_SECONDS: String(graceSeconds) });
    try {
      const upload = await uploadUrl(server, 200_000);
      const url = new URL(upload.url);
      const put = request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'PUT', headers: { ...uploadHeaders(upload), 'Content-Length': '200000' } });
      const answered = once(put, 'response') as Promise<[IncomingMessage]>;
      const underWay = requestArrives(server, 'PUT');
      put.write(Buffer.alloc(100_000));
      await underWay;
      // Shut down with half the body sent; then send the rest.
      const closing = server.close();
      put.end(Buffer.alloc(100_000));
      const [response] = await answered;
      response.resume();
      expect(response.statusCode).toBe(200);
      await closing;
      await expect(fetch(`${server.address}/healthz`)).rejects.toThrow();
    } finally {
      await server.stop();
    }
  });

  it('ends well inside the grace time with keep-alive clients connected: idle ones are closed, busy ones told Connection: close', async () => {
    const server = await startTestServer('sqlite', { SHUTDOWN_GRACE_SECONDS: String(graceSeconds) });
    // Two clients, each keeping its connection alive between requests.
    const idleAgent = new Agent({ keepAlive: true });
    const busyAgent = new Agent({ keepAlive: true });
    try {
      const upload = await uploadUrl(server, 200_000);

      // An idle keep-alive client: one request done, its connection kept open.
      const ask = request(`${server.address}/healthz`, { agent: idleAgent });
      const [idleSocket] = (await once(ask.end(), 'socket')) as [Socket];
      const [idle] = (await once(ask, 'response')) as [IncomingMessage];
      idle.resume();
      await once(idle, 'end');
      expect(idleSocket.destroyed).toBe(false);
      const idleClosed = once(idleSocket, 'close');

      // A busy keep-alive client: an upload whose body is half sent when the shutdown begins.
      const url = new URL(upload.url);
      const put = request({ agent: busyAgent, host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'PUT', headers: { ...uploadHeaders(upload), 'Content-Length': '200000' } });
      const answered = once(put, 'response') as Promise<[IncomingMessage]>;
      const underWay = requestArrives(server, 'PUT');
      put.write(Buffer.alloc(100_000));
      await underWay;

      const started = performance.now();
      const closing = server.close();
      put.end(Buffer.alloc(100_000));
      const [response] = await answered;
      response.resume();
      expect(response.statusCode).toBe(200);
      // RFC 9112 section 9.6: the server says it closes the connection after this response.
      expect(response.headers.connection).toBe('close');
      await closing;
      const tookMs = performance.now() - started;
      await idleClosed;
      // Before, the busy connection stayed open for Node's keep-alive timeout (5 s) after its response.
      expect(tookMs).toBeLessThan((graceSeconds * 1000) / 4);
    } finally {
      idleAgent.destroy();
      busyAgent.destroy();
      await server.stop();
    }
  });
});

describe('files on disk', () => {
  it('creates DATA_DIR 0700 and the SQLite database, its WAL and shared memory 0600', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'audio-share-modes-'));
    const dataDir = join(parent, 'data');
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent', PROCESSING: 'external', RATE_LIMIT_PER_SECOND: '0' });
    const server = await startServer(config, { logger: createLogger('silent') });
    try {
      // A write, so that the WAL and its index exist.
      await server.ctx.store.users.findOrCreate('modes@example.com', Date.now());
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      for (const file of ['audio-share.sqlite', 'audio-share.sqlite-wal', 'audio-share.sqlite-shm']) {
        expect(statSync(join(dataDir, file)).mode & 0o777, file).toBe(0o600);
      }
    } finally {
      await server.close();
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
