/**
 * PostgreSQL backend (node-postgres), used when DATABASE_URL is set, for
 * deployments that outgrow one machine.
 */
import pg from 'pg';
import type { Db, Migration, Row, SqlValue } from './db.ts';
import { postgresMigrations } from './migrations/postgres.ts';

// BIGINT (int8) columns hold millisecond timestamps and byte sizes. They fit
// in a double below 2^53, so read them as numbers, not strings.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export async function openPostgres(connectionString: string, migrations: Migration[] = postgresMigrations): Promise<Db> {
  const pool = new pg.Pool({ connectionString, max: 10 });
  // An idle client that loses its connection must not crash the server.
  pool.on('error', () => {});
  const db = new PostgresDb(pool);
  await migrate(pool, migrations);
  return db;
}

type Queryable = pg.Pool | pg.PoolClient;

class PostgresDb implements Db {
  readonly dialect = 'postgres' as const;

  constructor(
    private client: Queryable,
    private inTransaction = false,
  ) {}

  async query<T extends Row = Row>(sql: string, params: SqlValue[] = []): Promise<T[]> {
    return (await this.client.query(sql, params)).rows as T[];
  }

  async execute(sql: string, params: SqlValue[] = []): Promise<number> {
    return (await this.client.query(sql, params)).rowCount ?? 0;
  }

  async transaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    if (this.inTransaction) return work(this);
    const client = await (this.client as pg.Pool).connect();
    try {
      await client.query('BEGIN');
      const result = await work(new PostgresDb(client, true));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await (this.client as pg.Pool).end();
  }
}

async function migrate(pool: pg.Pool, migrations: Migration[]) {
  const client = await pool.connect();
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
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
