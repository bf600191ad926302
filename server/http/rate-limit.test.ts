import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { startServer, type RunningServer } from '../server.ts';
import { createLogger } from '../lib/logger.ts';
import { backends, createTestDatabase, type Backend, type TestDatabase } from '../testing/databases.ts';
import { addressKey } from '../lib/client-address.ts';


/** Servers sharing one throwaway database, as several processes of one deployment would. */
function useServers(backend: Backend, env: Record<string, string>, count: number) {
  let database: TestDatabase | undefined;
  const servers: RunningServer[] = [];
  beforeAll(async () => {
    database = await createTestDatabase(backend);
    for (let i = 0; i < count; i++) {
      const config = loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: database.dataDir,
        DATABASE_URL: database.databaseUrl,
        LOG_LEVEL: 'silent',
        PROCESSING: 'external',
        SHUTDOWN_GRACE_SECONDS: '5',
        ...env,
      });
      servers.push(await startServer(config, { logger: createLogger(config.logLevel) }));
    }
  });
  afterAll(async () => {
    for (const server of servers) await server.close();
    await database?.drop();
  });
  return {
    servers,
    async token(email: string) {
      const store = servers[0].ctx.store;
      const user = await store.users.findOrCreate(email, Date.now());
      return (await store.tokens.create(user.id, 'test', Date.now())).secret;
    },
  };
}

const get = (server: RunningServer, path: string, headers: Record<string, string> = {}) => fetch(`${server.address}/api/v1${path}`, { headers });

async function expectRateLimited(response: Response) {
  expect(response.status).toBe(429);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(await response.json()).toMatchObject({ type: '/problems/rate-limited', status: 429 });
}

describe.each(backends)('rate limits on %s', (backend) => {
  describe('by address, before authentication', () => {
    // 5 per 5 s from one address; users may do far more.
    const t = useServers(backend, { RATE_LIMIT_IP_PER_SECOND: '1', RATE_LIMIT_IP_BURST: '5', RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' }, 1);

    it('limits a flood of bad tokens, which never reach a token lookup once limited', async () => {
      const [server] = t.servers;
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await get(server, '/me', { Authorization: `Bearer as_guess${i}` })).status);
      expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      expect(statuses.slice(5)).toEqual([429, 429, 429]);
      await expectRateLimited(await get(server, '/me', { Authorization: 'Bearer as_another_guess' }));
      // Signed URLs are guessed without a token: the same limit holds.
      await expectRateLimited(await fetch(`${server.address}/api/v1/download/box_x?expires=1&signature=${'a'.repeat(64)}`));
    });
  });

  describe('shared by the servers of one database', () => {
    // Both limits at 10 per 10 s. Each server counts what the other let through.
    const t = useServers(backend, { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '10', RATE_LIMIT_IP_PER_SECOND: '1', RATE_LIMIT_IP_BURST: '10' }, 2);

    it('refuses the request past the limit on either server, though neither alone saw that many', async () => {
      const [a, b] = t.servers;
      const token = await t.token('shared@example.com');
      const auth = { Authorization: `Bearer ${token}` };
      for (let i = 0; i < 5; i++) expect((await get(a, '/me', auth)).status).toBe(200);
      for (let i = 0; i < 5; i++) expect((await get(b, '/me', auth)).status).toBe(200);
      // Server a has let 5 through itself: alone, it would answer this one.
      await expectRateLimited(await get(a, '/me', auth));
      await expectRateLimited(await get(b, '/me', auth));
    });
  });

  describe('per user', () => {
    // A user spread over many addresses (believed here through X-Forwarded-For) is still one user.
    const t = useServers(backend, { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '4', RATE_LIMIT_IP_PER_SECOND: '1000', RATE_LIMIT_IP_BURST: '1000', TRUST_PROXY: 'loopback' }, 1);

    it("counts one token's requests together from whatever address they come", async () => {
      const [server] = t.servers;
      const token = await t.token('spread@example.com');
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await get(server, '/me', { Authorization: `Bearer ${token}`, 'X-Forwarded-For': `198.51.100.${i + 1}` })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
      // Another user is not affected.
      const other = await t.token('calm@example.com');
      expect((await get(server, '/me', { Authorization: `Bearer ${other}` })).status).toBe(200);
    });
  });
  describe('RateLimit-Policy and RateLimit on every answer they counted', () => {
    // The address: 20 per 20 s. The account: 3 per 3 s.
    const t = useServers(backend, { RATE_LIMIT_IP_PER_SECOND: '1', RATE_LIMIT_IP_BURST: '20', RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '3' }, 1);

    /** The members of a structured-field list of the draft's items: name → parameters. */
    const items = (field: string | null) =>
      Object.fromEntries(
        (field ?? '').split(/,\s*/).map((member) => {
          const [name, ...parameters] = member.split(';');
          return [JSON.parse(name), Object.fromEntries(parameters.map((parameter) => [parameter.split('=')[0], Number(parameter.split('=')[1])]))];
        }),
      ) as Record<string, Record<string, number>>;

    it('names each limit that counted a request and what is left of it, down to 0 on the 429', async () => {
      const [server] = t.servers;
      // Before authentication (a bad token): only the address counted it.
      const anonymous = await get(server, '/me', { Authorization: 'Bearer as_not_a_token' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('ratelimit-policy')).toBe('"address";q=20;w=20');
      expect(items(anonymous.headers.get('ratelimit'))).toEqual({ address: { r: 19, t: expect.any(Number) } });

      const auth = { Authorization: `Bearer ${await t.token('counted@example.com')}` };
      const remaining: Array<Record<string, Record<string, number>>> = [];
      for (let i = 0; i < 3; i++) {
        const answer = await get(server, '/me', auth);
        expect(answer.status).toBe(200);
        expect(answer.headers.get('ratelimit-policy')).toBe('"address";q=20;w=20, "account";q=3;w=3');
        remaining.push(items(answer.headers.get('ratelimit')));
      }
      expect(remaining.map((limits) => [limits.address.r, limits.account.r])).toEqual([[18, 2], [17, 1], [16, 0]]);
      for (const limits of remaining) {
        expect(limits.address.t).toBeGreaterThanOrEqual(0);
        expect(limits.address.t).toBeLessThanOrEqual(20);
        expect(limits.account.t).toBeLessThanOrEqual(3);
      }

      const refused = await get(server, '/me', auth);
      await expectRateLimited(refused.clone());
      const limits = items(refused.headers.get('ratelimit'));
      expect(limits.account.r).toBe(0);
      // The draft: "the Retry-After field value SHOULD NOT reference a point in time earlier than the reset parameter".
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(limits.account.t);
      // Exposed to browser apps on other origins.
      expect(refused.headers.get('access-control-expose-headers')?.split(/,\s*/)).toEqual(expect.arrayContaining(['RateLimit', 'RateLimit-Policy']));
    });
  });
});

describe('TRUST_PROXY', () => {
  const limits = { RATE_LIMIT_IP_PER_SECOND: '1', RATE_LIMIT_IP_BURST: '3', RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' };

  describe('unset', () => {
    const t = useServers('sqlite', limits, 1);

    it('ignores X-Forwarded-For: a client cannot dodge its limit by claiming other addresses', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await get(t.servers[0], '/me', { 'X-Forwarded-For': `203.0.113.${i + 1}` })).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
    });
  });

  describe('set to loopback (a reverse proxy on this machine)', () => {
    const t = useServers('sqlite', { ...limits, TRUST_PROXY: 'loopback' }, 1);

    it('counts each client the proxy names on its own', async () => {
      const [server] = t.servers;
      for (let i = 0; i < 6; i++) expect((await get(server, '/me', { 'X-Forwarded-For': `203.0.113.${i + 1}` })).status).toBe(401);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await get(server, '/me', { 'X-Forwarded-For': '192.0.2.7' })).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
      // The proxy appends the address it saw: only the last hop before the trusted proxy counts.
      await expectRateLimited(await get(server, '/me', { 'X-Forwarded-For': '203.0.113.99, 192.0.2.7' }));
    });
  });
});

describe('address keys', () => {
  it('counts an IPv6 client by its /64 and an IPv4-mapped address as IPv4', () => {
    expect(addressKey('203.0.113.5')).toBe('203.0.113.5');
    expect(addressKey('::ffff:203.0.113.5')).toBe('203.0.113.5');
    expect(addressKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2::9')).toBe(addressKey('2001:db8:1:2:ffff::1'));
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('2001:0DB8:0001:0002::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
  });
});
