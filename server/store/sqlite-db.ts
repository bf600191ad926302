/**
 * SQLite backend (better-sqlite3): the embedded default, one file in
 * DATA_DIR, in WAL mode so that the admin CLI can read and write while the
 * server runs.
 */
import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import { RateLimiterSQLite, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { checkParameters, rateLimiterSettings, rateLimitTable, type Db, type Migration, type RateLimiterOptions, type Row, type SqlValue } from './db.ts';
import { Mutex } from '../lib/mutex.ts';
import { sqliteMigrations } from './migrations/sqlite.ts';
import { defaultLogger, type Logger } from '../lib/logger.ts';

/** The database holds every user's data and token hashes: only the server's user may read it. */
export const databaseFileMode = 0o600;

export async function openSqlite(file: string, migrations: Migration[] = sqliteMigrations, options: { logger?: Logger } = {}): Promise<Db> {
  restrictFileMode(file);
  const database = new Database(file);
  database.pragma('journal_mode = WAL');
  // WAL with synchronous=NORMAL is durable across application crashes and
  // loses at most the last transactions on power loss, the usual trade.
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  // Another process (the admin CLI) may hold the write lock for a moment.
  database.pragma('busy_timeout = 5000');
  const db = new SqliteDb(database, new Mutex(), options.logger ?? defaultLogger());
  await migrate(db, database, migrations);
  return db;
}

/**
 * Creates the database file 0600 before SQLite does (SQLite would make it
 * 0644 under the usual umask). SQLite gives the -wal and -shm files it makes
 * later the mode of the database file (os_unix.c, findCreateFileMode), so
 * they follow. Files left by older versions are narrowed too.
 */
function restrictFileMode(file: string): void {
  if (file === ':memory:' || file === '') return;
  if (!existsSync(file)) closeSync(openSync(file, 'a', databaseFileMode));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(path)) chmodSync(path, databaseFileMode);
}

/**
 * The repositories write PostgreSQL's numbered placeholders ($1, $2, … and
 * may repeat one). better-sqlite3 binds plain `?` in order, so each $n
 * becomes `?` and the parameters are laid out in the order they appear.
 */
function toSqlite(sql: string): { text: string; order: number[] } {
  const order: number[] = [];
  const text = sql.replace(/\$(\d+)/g, (_, n: string) => {
    order.push(Number(n) - 1);
    return '?';
  });
  return { text, order };
}

/** What the rate limiters of one connection share: expired counters are deleted every five minutes. */
interface RateLimitHousekeeping {
  timer?: NodeJS.Timeout;
}

/** Statements compiled once per connection, keyed by their SQL as the repositories write it. */
type StatementCache = Map<string, { statement: Database.Statement; order: number[]; inOrder: boolean }>;

class SqliteDb implements Db {
  readonly dialect = 'sqlite' as const;

  private database: Database.Database;
  private lock: Mutex;
  private logger: Logger;
  private inTransaction: boolean;
  private housekeeping: RateLimitHousekeeping;
  /**
   * Shared by the connection and every transaction on it: a transaction's
   * statements are the same as the connection's, and compiling them afresh
   * in each one cost more than running them.
   */
  private statements: StatementCache;
  /** BEGIN, COMMIT and ROLLBACK compiled once, as better-sqlite3's own transaction() does, rather than parsed on every exec. */
  private control: { begin: Database.Statement; commit: Database.Statement; rollback: Database.Statement };

  constructor(
    database: Database.Database,
    lock: Mutex,
    logger: Logger,
    inTransaction = false,
    housekeeping: RateLimitHousekeeping = {},
    statements: StatementCache = new Map(),
    control?: SqliteDb['control'],
  ) {
    this.database = database;
    this.lock = lock;
    this.logger = logger;
    this.inTransaction = inTransaction;
    this.housekeeping = housekeeping;
    this.statements = statements;
    this.control = control ?? { begin: database.prepare('BEGIN IMMEDIATE'), commit: database.prepare('COMMIT'), rollback: database.prepare('ROLLBACK') };
  }

  private prepare(sql: string, params: SqlValue[]): { statement: Database.Statement; values: SqlValue[] } {
    checkParameters(params);
    let prepared = this.statements.get(sql);
    if (!prepared) {
      const { text, order } = toSqlite(sql);
      prepared = { statement: this.database.prepare(text), order, inOrder: order.every((index, position) => index === position) };
      this.statements.set(sql, prepared);
    }
    // Most statements name $1, $2, … once each, in order: their parameters are bound as given, with no copy per query.
    if (prepared.inOrder && prepared.order.length === params.length) return { statement: prepared.statement, values: params };
    return { statement: prepared.statement, values: prepared.order.map((index) => params[index]) };
  }

  async query<T extends Row = Row>(sql: string, params: SqlValue[] = []): Promise<T[]> {
    return this.exclusive(() => {
      const { statement, values } = this.prepare(sql, params);
      if (statement.reader) return statement.all(...values) as T[];
      statement.run(...values);
      return [];
    });
  }

  async execute(sql: string, params: SqlValue[] = []): Promise<number> {
    return this.exclusive(() => {
      const { statement, values } = this.prepare(sql, params);
      return statement.run(...values).changes;
    });
  }

  /**
   * One connection serves every request. While a transaction is open, a
   * statement from elsewhere would run inside it (and be rolled back with
   * it), so it waits its turn; otherwise it runs at once.
   */
  private exclusive<T>(statement: () => T): T | Promise<T> {
    return this.inTransaction || !this.lock.locked ? statement() : this.lock.run(statement);
  }

  async transaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    if (this.inTransaction) return work(this);
    // The mutex keeps transactions whole: an await inside one must not let
    // another request's statements or transaction join it.
    return this.lock.run(async () => {
      this.control.begin.run();
      try {
        const result = await work(new SqliteDb(this.database, this.lock, this.logger, true, this.housekeeping, this.statements, this.control));
        this.control.commit.run();
        return result;
      } catch (error) {
        this.rollback(error);
        throw error;
      }
    });
  }

  private rollback(cause: unknown): void {
    // Some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM) end the transaction themselves; then there is nothing to roll back.
    if (!this.database.inTransaction) return;
    try {
      this.control.rollback.run();
    } catch (rollbackError) {
      // The caller gets the error that failed the transaction; this one is ours to report.
      this.logger.error('ROLLBACK failed after a failed transaction', { err: rollbackError, cause });
    }
  }

  /**
   * rate-limiter-flexible runs its statements on the better-sqlite3 handle
   * itself. That handle is the repositories' one connection, whose
   * transactions stay open across awaits: a limiter statement run during one
   * would land inside it (better-sqlite3 nests it as a savepoint) and be
   * rolled back with it. The limiter also takes a knex-style client, whose
   * acquireConnection() and releaseConnection() bracket each of its
   * statements; this one holds the connection's mutex between the two, so
   * the limiter's statements wait their turn like every other.
   */
  rateLimiter(options: RateLimiterOptions): RateLimiterAbstract {
    const lock = this.lock;
    // The limiter prepares its statement on every call; a statement is compiled once here instead (a third of its cost).
    const statements = new Map<string, Database.Statement>();
    const connection = {
      prepare: (sql: string) => statements.get(sql) ?? statements.set(sql, this.database.prepare(sql)).get(sql)!,
      // The limiter wraps its one statement (an INSERT … ON CONFLICT DO UPDATE … RETURNING) in a transaction, and
      // better-sqlite3's transaction() makes a new wrapper, with a BEGIN and a COMMIT, on every request. One statement
      // is a transaction by itself (sqlite.org/lang_transaction.html: "Any command that accesses the database … will
      // automatically start a transaction if one is not already in effect. Automatically started transactions are
      // committed when the last SQL statement finishes."), and the mutex, held from acquireConnection to
      // releaseConnection, keeps every other transaction off the connection meanwhile: it is run as it is (issue 32:
      // the limiter's per-request cost).
      transaction:
        <T>(work: () => T) =>
        () =>
          work(),
    };
    let release: (() => void) | undefined;
    const client = {
      raw: () => {
        throw new Error('The rate limiter uses acquireConnection, not raw queries.');
      },
      client: {
        config: { client: 'better-sqlite3' },
        acquireConnection: () =>
          new Promise<typeof connection>((acquired) => {
            void lock.run(
              () =>
                new Promise<void>((done) => {
                  release = done;
                  acquired(connection);
                }),
            );
          }),
        releaseConnection: () => {
          const done = release;
          release = undefined;
          done?.();
        },
      },
    };
    this.scheduleRateLimitCleanup();
    return new RateLimiterSQLite({ storeClient: client, storeType: 'knex', ...rateLimiterSettings(options) });
  }

  private scheduleRateLimitCleanup(): void {
    if (this.housekeeping.timer) return;
    this.housekeeping.timer = setInterval(() => {
      this.execute(`DELETE FROM ${rateLimitTable} WHERE expire < $1`, [Date.now()]).catch((error) => this.logger.warn('deleting expired rate-limit counters failed', { err: error }));
    }, 5 * 60_000);
    this.housekeeping.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.housekeeping.timer);
    this.database.close();
  }
}

async function migrate(db: Db, database: Database.Database, migrations: Migration[]) {
  database.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  await db.transaction(async (tx) => {
    const applied = new Set((await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).map((row) => row.version));
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      database.exec(migration.sql);
      await tx.execute('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [migration.version, migration.name, Date.now()]);
    }
    // rate-limiter-flexible's own layout (RateLimiterSQLite._getCreateTableSQL); disposable counters, so not a numbered migration.
    database.exec(`CREATE TABLE IF NOT EXISTS ${rateLimitTable} (key TEXT PRIMARY KEY, points INTEGER NOT NULL DEFAULT 0, expire INTEGER)`);
  });
}
