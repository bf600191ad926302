/**
 * The one seam between the repositories and a database engine. The
 * repositories write SQL once, with PostgreSQL-style `$1` placeholders, in the
 * subset both engines speak; each backend (SQLite, PostgreSQL) implements this
 * interface and passes the same conformance tests (store.conformance.ts).
 *
 * Values crossing it are plain: strings, numbers (timestamps in ms fit in
 * 2^53), null. Booleans are stored as 0/1 integers in both engines so the
 * SQL stays identical; JSON is stored as text.
 */
export type SqlValue = string | number | null;
export type Row = Record<string, SqlValue>;

export interface Db {
  /** The engine, for the few places where the SQL must differ. */
  readonly dialect: 'sqlite' | 'postgres';
  query<T extends Row = Row>(sql: string, params?: SqlValue[]): Promise<T[]>;
  /** Runs a statement and answers how many rows it changed. */
  execute(sql: string, params?: SqlValue[]): Promise<number>;
  /**
   * Runs `work` in one transaction: all of its changes land, or none do.
   * Transactions never interleave on a connection; the callback must use the
   * `Db` it is given, not the outer one.
   */
  transaction<T>(work: (db: Db) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface Migration {
  version: number;
  name: string;
  sql: string;
}
