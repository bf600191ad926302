/**
 * SQLite backend (better-sqlite3): the embedded default, one file in
 * DATA_DIR, in WAL mode so that the admin CLI can read and write while the
 * server runs.
 */
import Database from 'better-sqlite3';
import type { Db, Migration, Row, SqlValue } from './db.ts';
import { Mutex } from '../lib/mutex.ts';
import { sqliteMigrations } from './migrations/sqlite.ts';

export async function openSqlite(file: string, migrations: Migration[] = sqliteMigrations): Promise<Db> {
  const database = new Database(file);
  database.pragma('journal_mode = WAL');
  // WAL with synchronous=NORMAL is durable across application crashes and
  // loses at most the last transactions on power loss, the usual trade.
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  // Another process (the admin CLI) may hold the write lock for a moment.
  database.pragma('busy_timeout = 5000');
  const db = new SqliteDb(database, new Mutex());
  await migrate(db, database, migrations);
  return db;
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

class SqliteDb implements Db {
  readonly dialect = 'sqlite' as const;
  private statements = new Map<string, { statement: Database.Statement; order: number[] }>();

  constructor(
    private database: Database.Database,
    private lock: Mutex,
    private inTransaction = false,
  ) {}

  private prepare(sql: string, params: SqlValue[]): { statement: Database.Statement; values: SqlValue[] } {
    let prepared = this.statements.get(sql);
    if (!prepared) {
      const { text, order } = toSqlite(sql);
      prepared = { statement: this.database.prepare(text), order };
      this.statements.set(sql, prepared);
    }
    return { statement: prepared.statement, values: prepared.order.map((index) => params[index]) };
  }

  async query<T extends Row = Row>(sql: string, params: SqlValue[] = []): Promise<T[]> {
    return this.exclusive(() => {
      const { statement, values } = this.prepare(sql, params);
      return (statement.reader ? statement.all(...values) : (statement.run(...values), [])) as T[];
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
      this.database.exec('BEGIN IMMEDIATE');
      try {
        const result = await work(new SqliteDb(this.database, this.lock, true));
        this.database.exec('COMMIT');
        return result;
      } catch (error) {
        this.database.exec('ROLLBACK');
        throw error;
      }
    });
  }

  async close(): Promise<void> {
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
  });
}
