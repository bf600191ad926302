/**
 * PostgreSQL backend (node-postgres), used when DATABASE_URL is set, for
 * deployments that outgrow one machine.
 */
import pg from 'pg';
import { RateLimiterPostgres, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { checkParameters, rateLimiterSettings, rateLimitTable, type Db, type Migration, type RateLimiterOptions, type Row, type SqlValue } from './db.ts';
import { postgresMigrations } from './migrations/postgres.ts';
import { defaultLogger, type Logger } from '../lib/logger.ts';

// BIGINT (int8) columns hold millisecond timestamps and byte sizes. They fit
// in a double below 2^53, so read them as numbers, not strings.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export interface PostgresOptions {
  logger?: Logger;
  /**
   * Called when the pool reports an error on an idle connection: the server
   * was restarted, the connection was killed, the network went away. The
   * default logs it and exits with status 1, so that the supervisor
   * (systemd, Kubernetes, Docker) starts a fresh process, rather than one
   * that limps on with a pool in an unknown state.
   */
  onPoolError?: (error: Error) => void;
}

/** The default pool-error handler: log the error with its stack, then exit. `exit` is there for the tests. */
export function exitOnPoolError(logger: Logger, exit: (code: number) => void = (code) => process.exit(code)): (error: Error) => void {
  return (error) => {
    logger.error('PostgreSQL connection lost; exiting so that the supervisor restarts the server', { err: error });
    exit(1);
  };
}

export async function openPostgres(connectionString: string, migrations: Migration[] = postgresMigrations, options: PostgresOptions = {}): Promise<Db> {
  const logger = options.logger ?? defaultLogger();
  const pool = new pg.Pool({ connectionString, max: 10 });
  // node-postgres emits 'error' on the pool for idle clients; without a listener it would be an uncaught exception with no context.
  const onPoolError = options.onPoolError ?? exitOnPoolError(logger);
  pool.on('error', (error: Error & { client?: unknown }) => {
    // pg-pool hangs the dead client on the error; logged, it would be hundreds of lines of connection state.
    delete error.client;
    onPoolError(error);
  });
  const db = new PostgresDb(pool, logger);
  await migrate(pool, migrations, logger);
  return db;
}

type Queryable = pg.Pool | pg.PoolClient;

class PostgresDb implements Db {
  readonly dialect = 'postgres' as const;
  private cleanup: NodeJS.Timeout | undefined;

  private client: Queryable;
  private logger: Logger;
  private inTransaction: boolean;

  constructor(
    client: Queryable,
    logger: Logger,
    inTransaction = false,
  ) {
    this.client = client;
    this.logger = logger;
    this.inTransaction = inTransaction;
  }

  async query<T extends Row = Row>(sql: string, params: SqlValue[] = []): Promise<T[]> {
    checkParameters(params);
    return (await this.client.query(sql, params)).rows as T[];
  }

  async execute(sql: string, params: SqlValue[] = []): Promise<number> {
    checkParameters(params);
    return (await this.client.query(sql, params)).rowCount ?? 0;
  }

  async transaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    if (this.inTransaction) return work(this);
    const client = await (this.client as pg.Pool).connect();
    let broken: Error | undefined;
    // While checked out, a client has no 'error' listener of the pool's: a connection lost between two statements
    // would be an uncaught exception. The statement after it fails with its own error, which the caller gets.
    const lost = (error: Error) => this.logger.warn('PostgreSQL connection lost during a transaction', { err: error });
    client.on('error', lost);
    try {
      await client.query('BEGIN');
      const result = await work(new PostgresDb(client, this.logger, true));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      broken = await rollback(client, error, this.logger);
      throw error;
    } finally {
      client.removeListener('error', lost);
      // A connection whose ROLLBACK failed is in an unknown state: passing the error destroys it instead of pooling it.
      client.release(broken);
    }
  }

  rateLimiter(options: RateLimiterOptions): RateLimiterAbstract {
    this.scheduleRateLimitCleanup();
    return new RateLimiterPostgres({ storeClient: this.client, storeType: 'pool', ...rateLimiterSettings(options) });
  }

  private scheduleRateLimitCleanup(): void {
    if (this.cleanup || this.inTransaction) return;
    this.cleanup = setInterval(() => {
      this.execute(`DELETE FROM ${rateLimitTable} WHERE expire < $1`, [Date.now()]).catch((error) => this.logger.warn('deleting expired rate-limit counters failed', { err: error }));
    }, 5 * 60_000);
    this.cleanup.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.cleanup);
    await (this.client as pg.Pool).end();
  }
}

/** Rolls back after `cause` failed a transaction; answers the ROLLBACK's own error, logged, if it failed too. */
async function rollback(client: pg.PoolClient, cause: unknown, logger: Logger): Promise<Error | undefined> {
  try {
    await client.query('ROLLBACK');
    return undefined;
  } catch (rollbackError) {
    // The caller gets the error that failed the transaction; this one is ours to report.
    logger.error('ROLLBACK failed after a failed transaction; dropping the connection', { err: rollbackError, cause });
    return rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
  }
}

async function migrate(pool: pg.Pool, migrations: Migration[], logger: Logger) {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    // Two servers starting at once must not both apply a migration.
    await client.query('SELECT pg_advisory_xact_lock(724011)');
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
    const applied = new Set((await client.query('SELECT version FROM schema_migrations')).rows.map((row) => row.version as number));
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [migration.version, migration.name, Date.now()]);
    }
    // rate-limiter-flexible's own layout (RateLimiterPostgres._getCreateTableStmt). The counters are
    // disposable, so the table is UNLOGGED (no WAL, no fsync per request; emptied after a crash) and is
    // not a numbered migration. The advisory lock above keeps two servers from creating it at once.
    await client.query(`CREATE UNLOGGED TABLE IF NOT EXISTS ${rateLimitTable} (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint)`);
    await client.query('COMMIT');
  } catch (error) {
    broken = await rollback(client, error, logger);
    throw error;
  } finally {
    client.release(broken);
  }
}
