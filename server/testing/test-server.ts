/**
 * A real server for tests, on loopback, on a throwaway database of either
 * backend, with response validation on. It can make users and tokens, and
 * its clock can be moved forward.
 */
import { loadConfig, type Config } from '../config.ts';
import { startServer, type RunningServer } from '../server.ts';
import { createLogger } from '../lib/logger.ts';
import type { Clock } from '../lib/clock.ts';
import type { MediaTools } from '../audio/media-tools.ts';
import { createTestDatabase, type Backend } from './databases.ts';

export class TestClock implements Clock {
  private offset = 0;
  now() {
    return Date.now() + this.offset;
  }
  advance(ms: number) {
    this.offset += ms;
  }
}

export interface TestServer extends RunningServer {
  backend: Backend;
  apiUrl: string;
  clock: TestClock;
  /** Creates (or finds) the user with this email and returns a new bearer token of theirs. */
  token(email: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startTestServer(backend: Backend, env: Record<string, string> = {}, overrides: { media?: MediaTools } = {}): Promise<TestServer> {
  const database = await createTestDatabase(backend);
  const config: Config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: database.dataDir,
    DATABASE_URL: database.databaseUrl,
    VALIDATE_RESPONSES: 'true',
    RATE_LIMIT_PER_SECOND: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SHUTDOWN_GRACE_SECONDS: '5',
    // Audio jobs run only in the tests of the pipeline, which ask for them.
    PROCESSING: 'external',
    // A server that takes payments, so that tests can set paywalls; its Stripe is a closed loopback port, so nothing
    // reaches Stripe. Tests of payments point STRIPE_API_BASE at their fake (server/testing/fake-stripe.ts); tests of a
    // server without payments give '' for these.
    STRIPE_SECRET_KEY: 'sk_test_harness',
    STRIPE_WEBHOOK_SECRET: 'whsec_harness',
    STRIPE_API_BASE: 'http://127.0.0.1:9',
    ...env,
  });
  const clock = new TestClock();
  // The public URL is only known once the port is; start, then point it at the real address.
  const server = await startServer(config, { clock, logger: createLogger(config.logLevel), ...overrides });
  config.publicUrl = env.PUBLIC_URL ?? server.address;
  return {
    ...server,
    backend,
    apiUrl: `${config.publicUrl}/api/v1`,
    clock,
    async token(email: string) {
      const user = await server.ctx.store.users.findOrCreate(email, Date.now());
      return (await server.ctx.store.tokens.create(user.id, 'test', Date.now())).secret;
    },
    async stop() {
      await server.close();
      await database.drop();
    },
  };
}
