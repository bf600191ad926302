/**
 * Per-file setup for the server's HTTP tests: a real server on loopback on a
 * throwaway database, and typed clients for users made on demand.
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createApiClient, type ApiClient } from '../../generated/client.ts';
import type { Backend } from './databases.ts';
import { startTestServer, type TestServer } from './test-server.ts';
import type { MediaTools } from '../audio/media-tools.ts';

export interface Harness {
  readonly server: TestServer;
  /** A client for the user with this email (made on first use), and the user's token. */
  as(email: string): Promise<{ api: ApiClient; token: string }>;
  /** A raw request to the API root. */
  fetch(path: string, init?: RequestInit & { token?: string }): Promise<Response>;
}

export function useTestServer(backend: Backend, env: Record<string, string> = {}, overrides: { media?: MediaTools } = {}): Harness {
  let server: TestServer | undefined;
  const users = new Map<string, { api: ApiClient; token: string }>();
  // The test reporter prints this store beside each test's name (scripts/vitest-store-reporter.ts).
  beforeEach((context) => {
    (context.task.meta as { store?: string }).store = backend;
  });
  beforeAll(async () => {
    server = await startTestServer(backend, env, overrides);
  });
  afterAll(async () => {
    await server?.stop();
  });
  return {
    get server() {
      if (!server) throw new Error('The test server has not started yet');
      return server;
    },
    async as(email: string) {
      let user = users.get(email);
      if (!user) {
        const token = await this.server.token(email);
        user = { token, api: createApiClient({ baseUrl: this.server.apiUrl, token }) };
        users.set(email, user);
      }
      return user;
    },
    fetch(path: string, init: RequestInit & { token?: string } = {}) {
      const headers = new Headers(init.headers);
      if (init.token) headers.set('Authorization', `Bearer ${init.token}`);
      return fetch(this.server.apiUrl + path, { ...init, headers });
    },
  };
}

export const json = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
