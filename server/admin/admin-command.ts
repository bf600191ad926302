/**
 * What the start banner and the admin CLI tell the operator about the store:
 * which database a configuration points at, and the admin command that
 * reaches the same database as a running server.
 *
 * The command matters because `npm run admin` reads its own environment: a
 * server started with `DATA_DIR=/srv/audio npm start` keeps its tokens in
 * /srv/audio, and a bare `npm run admin -- token create` would mint one in
 * ./data that this server has never heard of.
 */
import { join, resolve } from 'node:path';
import type { Config } from '../config.ts';

/** The package root: `npm run` runs every script there, so `npm run admin` resolves the default DATA_DIR against it. */
const packageRoot = resolve(import.meta.dirname, '../..');

/** The SQLite file of a data directory (server/store/store.ts opens this name; cli.test.ts checks they agree). */
export const sqliteFile = (dataDir: string) => join(dataDir, 'audio-share.sqlite');

/**
 * A PostgreSQL URL without its password (in the user part or a `password`
 * query parameter), fit for a terminal and a log. The password is replaced by
 * nothing at all rather than by asterisks, so the URL stays a valid one.
 */
export function withoutPassword(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.password = '';
  url.searchParams.delete('password');
  return url.toString();
}

export function hasPassword(databaseUrl: string): boolean {
  const url = new URL(databaseUrl);
  return url.password !== '' || url.searchParams.has('password');
}

/** "SQLite /srv/audio/audio-share.sqlite" or "PostgreSQL postgres://audio@db:5432/audio". */
export function describeDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): string {
  return config.databaseUrl ? `PostgreSQL ${withoutPassword(config.databaseUrl)}` : `SQLite ${sqliteFile(config.dataDir)}`;
}

/** Quotes a value for a POSIX shell when it needs it. */
export function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command that mints a token in this configuration's database, with the
 * DATA_DIR= and DATABASE_URL= prefixes it needs. DATA_DIR is given as the
 * absolute path the server resolved, whenever it was set or differs from the
 * default the CLI would pick, so the command works from any directory.
 * DATABASE_URL is given as it is, except its password, which a banner (and
 * so the logs that keep it) must not show: `passwordHidden` says so.
 */
export function adminTokenCommand(config: Pick<Config, 'databaseUrl' | 'dataDir'>, env: Record<string, string | undefined>): { command: string; passwordHidden: boolean } {
  const prefix: string[] = [];
  if (env.DATA_DIR || config.dataDir !== resolve(packageRoot, 'data')) prefix.push(`DATA_DIR=${shellQuote(config.dataDir)}`);
  let passwordHidden = false;
  if (config.databaseUrl) {
    passwordHidden = hasPassword(config.databaseUrl);
    prefix.push(`DATABASE_URL=${shellQuote(passwordHidden ? withoutPassword(config.databaseUrl) : config.databaseUrl)}`);
  }
  return { command: [...prefix, 'npm run --silent admin -- token create --email you@example.com'].join(' '), passwordHidden };
}
