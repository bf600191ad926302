import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startTestServer } from './testing/test-server.ts';
import { createApiClient, uploadHeaders } from '../generated/client.ts';

describe('graceful shutdown', () => {
  it('lets an upload under way finish, while refusing new connections', async () => {
    const server = await startTestServer('sqlite');
    try {
      const token = await server.token('shutdown@example.com');
      const { data: project } = await createApiClient({ baseUrl: server.apiUrl, token }).POST('/projects', { body: { name: 'P' } });
      const response = await fetch(`${server.apiUrl}/projects/${project!.id}/files`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'slow.wav', mimeType: 'audio/wav', size: 200_000 }),
      });
      const upload = await response.json();
      const url = new URL(upload.url);
      const finished = new Promise<number>((done, fail) => {
        const req = request(
          { host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'PUT', headers: { ...uploadHeaders(upload), 'Content-Length': '200000' } },
          (res) => {
            res.resume();
            res.on('end', () => done(res.statusCode!));
          },
        );
        req.on('error', fail);
        req.write(Buffer.alloc(100_000));
        // Shut down with half the body sent; then send the rest.
        setTimeout(() => {
          closing = server.close();
          setTimeout(() => req.end(Buffer.alloc(100_000)), 200);
        }, 100);
      });
      let closing: Promise<void> | undefined;
      expect(await finished).toBe(200);
      await closing;
      await expect(fetch(`${server.address}/healthz`)).rejects.toThrow();
    } finally {
      await server.stop();
    }
  });
});
