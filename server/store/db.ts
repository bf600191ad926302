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
import type { RateLimiterAbstract } from 'rate-limiter-flexible';

export type SqlValue = string | number | null;
export type Row = Record<string, SqlValue>;

/** A fixed-window limit: `points` per `durationSeconds`, counted per key. */
export interface RateLimiterOptions {
  /** Keeps the counters of different limits apart in the one table. */
  keyPrefix: string;
  points: number;
  durationSeconds: number;
  /**
   * Whether a key over its limit is refused from memory until its window
   * ends (the default). Off for counters whose points are given back
   * (reward): the memory of a refusal does not hear a reward, and would
   * go on refusing a key that the database counts under its limit again.
   */
  blockInMemory?: boolean;
}

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
  /**
   * A rate limiter (rate-limiter-flexible) whose counters are rows of this
   * database, so that every process using the database shares them.
   */
  rateLimiter(options: RateLimiterOptions): RateLimiterAbstract;
  close(): Promise<void>;
}

/**
 * The COLLATE clause that compares and orders text by code unit, as the
 * sort keys of paged lists are (lib/sort-keys.ts compareKeys): none on
 * SQLite, whose default collation (BINARY) does; "C" on PostgreSQL, whose
 * database collation may sort by language instead. A query that pages by
 * keyset puts it after the id it compares and orders by, and its index
 * does too (migration 28).
 */
export const byCodeUnit = (db: Db): string => (db.dialect === 'postgres' ? ' COLLATE "C"' : '');

/**
 * A text value holds U+0000. PostgreSQL cannot store it in text at all
 * ("invalid byte sequence for encoding UTF8: 0x00"), and SQLite would cut
 * some functions short at it, so both backends refuse it before the query
 * runs. It can only come from input, which the HTTP layer answers with 400.
 */
export class NulCharacterError extends Error {
  constructor() {
    super('A text value holds a NUL character (U+0000), which the database cannot store.');
    this.name = 'NulCharacterError';
  }
}

/** Refuses parameters that hold U+0000 (see NulCharacterError). */
export function checkParameters(params: readonly SqlValue[]): void {
  for (const value of params) if (typeof value === 'string' && value.includes('\u0000')) throw new NulCharacterError();
}

/**
 * The counters of rate-limiter-flexible: its own table layout (key, points,
 * expire). They are throwaway, so on PostgreSQL the table is UNLOGGED: no
 * WAL, no fsync per request, emptied after a crash.
 */
export const rateLimitTable = 'rate_limits';

/** What both backends' limiters share: the table (created by the migrate step), the limit, and how a flood is refused. */
export function rateLimiterSettings({ keyPrefix, points, durationSeconds, blockInMemory = true }: RateLimiterOptions) {
  return {
    tableName: rateLimitTable,
    tableCreated: true,
    // Its own timer swallows errors and outlives close(); each backend deletes expired counters itself, and logs.
    clearExpiredByTimeout: false,
    keyPrefix,
    points,
    duration: durationSeconds,
    // Once a key is over its limit, refuse it from memory until its window ends: a flood costs no queries.
    inMemoryBlockOnConsumed: blockInMemory ? points + 1 : 0,
  };
}

export interface Migration {
  version: number;
  name: string;
  sql: string;
}
