import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import { loadConfig } from '../config.ts';
import { startServer, type RunningServer } from '../server.ts';
import { createLogger, isoTimeField } from '../lib/logger.ts';
import { createTestDatabase, postgresAdminUrl, type TestDatabase } from '../testing/databases.ts';
import { exitOnPoolError, openPostgres } from '../store/postgres-db.ts';

type Line = Record<string, unknown> & { level: string; message: string; time: string };

/** A pino destination that keeps each JSON line, and lets a test await one. */
function capture() {
  const lines: Line[] = [];
  const waiters: Array<{ match: (line: Line) => boolean; found: (line: Line) => void }> = [];
  return {
    lines,
    write(text: string) {
      const line = JSON.parse(text) as Line;
      lines.push(line);
      for (const waiter of waiters.filter((w) => w.match(line))) waiter.found(line);
    },
    next(match: (line: Line) => boolean): Promise<Line> {
      const seen = lines.find(match);
      return seen ? Promise.resolve(seen) : new Promise((found) => waiters.push({ match, found }));
    },
  };
}

describe('logger', () => {
  it('writes JSON lines with an ISO time, the level by name and the message, and every Error field with its stack', () => {
    const out = capture();
    const logger = createLogger('info', out);
    const cause = new Error('disk full');
    const error = new Error('write failed', { cause });
    logger.warn('could not store', { error, failure: new TypeError('bad'), err: cause, plain: 'kept' });
    logger.debug('not written at info');
    expect(out.lines).toHaveLength(1);
    const [line] = out.lines;
    expect(line).toMatchObject({ level: 'warn', message: 'could not store', plain: 'kept' });
    expect(new Date(line.time).toISOString()).toBe(line.time);
    expect(line.error).toMatchObject({ type: 'Error', message: expect.stringContaining('write failed'), stack: expect.stringContaining('logging.test.ts') });
    expect(line.failure).toMatchObject({ type: 'TypeError', message: 'bad', stack: expect.stringContaining('TypeError: bad') });
    expect(line.err).toMatchObject({ message: 'disk full', stack: expect.any(String) });
  });
});

describe('the time of a line', () => {
  afterEach(() => vi.useRealTimers());

  it('is pino\'s isoTime to the millisecond, made anew when the clock moves on, even by one millisecond', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.UTC(2026, 11, 1, 20, 0, 0, 5));
    expect(isoTimeField()).toBe(',"time":"2026-12-01T20:00:00.005Z"');
    // Within the same millisecond, the same text.
    expect(isoTimeField()).toBe(',"time":"2026-12-01T20:00:00.005Z"');
    vi.setSystemTime(Date.UTC(2026, 11, 1, 20, 0, 0, 6));
    expect(isoTimeField()).toBe(',"time":"2026-12-01T20:00:00.006Z"');
    // A clock set back (NTP) is followed too: the text is the clock's, never a cached later one.
    vi.setSystemTime(Date.UTC(2026, 11, 1, 19, 59, 59, 999));
    expect(isoTimeField()).toBe(',"time":"2026-12-01T19:59:59.999Z"');
  });
});

describe('request logs', () => {
  const out = capture();
  let server: RunningServer;
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: database.dataDir, LOG_LEVEL: 'info', PROCESSING: 'external', RATE_LIMIT_PER_SECOND: '0' });
    server = await startServer(config, { logger: createLogger('info', out) });
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it('logs one line per request with its id, and never the query (signed URLs carry their signature there)', async () => {
    const response = await fetch(`${server.address}/api/v1/download/box_x?expires=1&signature=${'a'.repeat(64)}`, { headers: { 'X-Request-Id': 'trace-download' } });
    expect(response.headers.get('x-request-id')).toBe('trace-download');
    const line = await out.next((l) => l.requestId === 'trace-download');
    expect(line).toMatchObject({ level: 'info', message: 'request', method: 'GET', path: '/api/v1/download/box_x', status: response.status, completed: true });
    expect(typeof line.durationMs).toBe('number');
    expect(JSON.stringify(line)).not.toContain('signature');
  });

  it('logs a 500 at error level with the error and its stack, under the id the problem quotes', async () => {
    const store = server.ctx.store;
    const ping = store.ping;
    store.ping = async () => {
      throw new Error('the disk is on fire');
    };
    try {
      const response = await fetch(`${server.address}/healthz`);
      expect(response.status).toBe(500);
      const problem = await response.json();
      expect(problem.detail).not.toContain('fire');
      const line = await out.next((l) => l.requestId === problem.instance);
      expect(line).toMatchObject({ level: 'error', path: '/healthz', status: 500 });
      expect(line.err).toMatchObject({ message: 'the disk is on fire', stack: expect.stringContaining('logging.test.ts') });
    } finally {
      store.ping = ping;
    }
  });
});

describe('PostgreSQL pool failures', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    await database?.drop();
  });

  /** Ends every other connection to the test database, as a restart of PostgreSQL would. */
  async function killConnections() {
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    try {
      const name = new URL(database.databaseUrl!).pathname.slice(1);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
    } finally {
      await admin.end();
    }
  }

  it('logs a lost idle connection with its stack and exits, so that a supervisor restarts the process', async () => {
    const out = capture();
    const logger = createLogger('info', out);
    let exited!: (code: number) => void;
    const exitCode = new Promise<number>((resolve) => (exited = resolve));
    const db = await openPostgres(database.databaseUrl!, undefined, { logger, onPoolError: exitOnPoolError(logger, exited) });
    try {
      // After the migrations, their connection waits idle in the pool.
      await killConnections();
      expect(await exitCode).toBe(1);
      const line = await out.next((l) => l.level === 'error');
      expect(line.message).toMatch(/PostgreSQL connection lost/);
      expect(line.err).toMatchObject({ message: expect.stringMatching(/terminat/i), stack: expect.any(String) });
      expect(line.err).not.toHaveProperty('client');
    } finally {
      await db.close();
    }
  });

  it('logs a ROLLBACK that fails, gives the caller the error that failed the transaction, and drops the connection', async () => {
    const out = capture();
    const logger = createLogger('info', out);
    const db = await openPostgres(database.databaseUrl!, undefined, { logger, onPoolError: (error) => logger.warn('pool error', { err: error }) });
    try {
      const failed = db.transaction(async (tx) => {
        await tx.execute('CREATE TEMPORARY TABLE doomed (id integer)');
        // The connection dies under the transaction: the statement fails, and so does the ROLLBACK after it.
        await tx.query('SELECT pg_terminate_backend(pg_backend_pid())');
      });
      await expect(failed).rejects.toThrow(/terminat/i);
      const line = await out.next((l) => /ROLLBACK failed/.test(l.message));
      expect(line).toMatchObject({ level: 'error', err: { stack: expect.any(String) }, cause: { message: expect.stringMatching(/terminat/i) } });
      // The pool goes on with a fresh connection.
      expect(await db.query('SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
    } finally {
      await db.close();
    }
  });
});
