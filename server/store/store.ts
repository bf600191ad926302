/**
 * The store: one database (SQLite or PostgreSQL, behind the `Db` seam) and
 * the repositories registered over it. This layer knows nothing of the
 * resources: the composition root (server/repositories.ts) says which
 * repositories exist, and `storeOver` builds them over a database, or over
 * one transaction of it.
 */
import { join } from 'node:path';
import type { Db } from './db.ts';
import type { Logger } from '../lib/logger.ts';

/** The repositories `R`, plus the database they share and a way to share one transaction. */
export type StoreOf<R> = R & {
  readonly db: Db;
  /** Runs `work` with a store whose repositories share one transaction: all of its changes land, or none do. */
  transaction<T>(work: (store: StoreOf<R>) => Promise<T>): Promise<T>;
  /**
   * Runs `effect` once the transaction this store belongs to has committed
   * (at once, outside a transaction); never when it rolls back. For what
   * must not happen before the data is there for others to read, such as
   * waking a worker for a job just queued.
   */
  afterCommit(effect: () => void): void;
  ping(): Promise<void>;
  close(): Promise<void>;
};

/**
 * Builds the repositories `register` names over `db`; a transaction gets its
 * own set, over the transaction. `committed` collects the after-commit
 * effects of the outermost transaction under way, which nested ones share.
 */
export function storeOver<R extends object>(db: Db, register: (db: Db) => R, committed?: Array<() => void>): StoreOf<R> {
  return Object.assign(register(db), {
    db,
    transaction: async <T>(work: (store: StoreOf<R>) => Promise<T>) => {
      if (committed) return db.transaction((tx) => work(storeOver(tx, register, committed)));
      const effects: Array<() => void> = [];
      const result = await db.transaction((tx) => work(storeOver(tx, register, effects)));
      for (const effect of effects) effect();
      return result;
    },
    afterCommit: (effect: () => void) => {
      if (committed) committed.push(effect);
      else effect();
    },
    ping: async () => {
      await db.query('SELECT 1 AS ok');
    },
    close: () => db.close(),
  });
}

export interface DatabaseOptions {
  /** A postgres:// URL: PostgreSQL. Without one, SQLite in `dataDir`. */
  databaseUrl?: string;
  dataDir: string;
  /** Where the backend reports what it cannot throw (a failed ROLLBACK, a pool error). */
  logger?: Logger;
}

/** Opens the database, applying migrations: PostgreSQL when a DATABASE_URL is given, SQLite otherwise. */
export async function openDatabase(options: DatabaseOptions): Promise<Db> {
  // Each backend's driver is loaded only when it is the one used: a SQLite server never loads pg, nor PostgreSQL's better-sqlite3.
  if (options.databaseUrl) return (await import('./postgres-db.ts')).openPostgres(options.databaseUrl, undefined, { logger: options.logger });
  return (await import('./sqlite-db.ts')).openSqlite(join(options.dataDir, 'audio-share.sqlite'), undefined, { logger: options.logger });
}
