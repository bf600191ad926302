/**
 * Configuration, from environment variables, checked at start. Each bad value
 * gets a message that says what is wrong and what is accepted. Secrets that
 * are not given are generated on first start and kept in DATA_DIR.
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /** The origin (and optional path prefix) clients reach the server at; signed URLs and player links start with it. */
  publicUrl: string;
  signingSecret: Buffer;
  maxUploadBytes: number;
  maxArtworkBytes: number;
  uploadUrlTtlMs: number;
  downloadUrlTtlMs: number;
  validateResponses: boolean;
  rateLimit: { perSecond: number; burst: number };
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  shutdownGraceMs: number;
  /** Where audio jobs run: in the server process, or only in `npm run worker` processes. */
  processing: 'in-process' | 'external';
  workerConcurrency: number;
  jobLeaseMs: number;
  jobPollMs: number;
  /** Wait before the first retry of a failed job; doubled for each further one. */
  jobBackoffMs: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const integer = (name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name}=${raw} is not valid: give a whole number from ${min} to ${max}.`);
      return fallback;
    }
    return value;
  };
  const boolean = (name: string, fallback: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
    if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
    problems.push(`${name}=${raw} is not valid: give true or false.`);
    return fallback;
  };

  const port = integer('PORT', 8080, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const dataDir = resolve(env.DATA_DIR || 'data');

  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push(`DATABASE_URL must be a PostgreSQL URL (postgres://user@host:port/database); got "${databaseUrl}". Leave it unset to use SQLite in DATA_DIR.`);
  }

  let publicUrl = env.PUBLIC_URL || `http://localhost:${port}`;
  try {
    const parsed = new URL(publicUrl);
    if (!['http:', 'https:'].includes(parsed.protocol) || parsed.search || parsed.hash) throw new Error();
    publicUrl = publicUrl.replace(/\/+$/, '');
  } catch {
    problems.push(`PUBLIC_URL=${env.PUBLIC_URL} is not valid: give the http(s) URL clients reach this server at, such as https://audio.example.org, without a query.`);
  }

  const logLevel = (env.LOG_LEVEL || 'info') as Config['logLevel'];
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(logLevel)) problems.push(`LOG_LEVEL=${env.LOG_LEVEL} is not valid: give debug, info, warn, error or silent.`);

  const processing = (env.PROCESSING || 'in-process') as Config['processing'];
  if (!['in-process', 'external'].includes(processing)) {
    problems.push(`PROCESSING=${env.PROCESSING} is not valid: give in-process (jobs run in the server) or external (jobs run in npm run worker).`);
  }

  const config = {
    port,
    processing,
    workerConcurrency: integer('WORKER_CONCURRENCY', 1, 1, 64),
    // A running job renews its lease every third of it; a worker silent for a whole lease is taken for dead.
    jobLeaseMs: integer('JOB_LEASE_SECONDS', 60, 1, 3600) * 1000,
    jobPollMs: integer('JOB_POLL_MS', 500, 10, 60_000),
    jobBackoffMs: integer('JOB_BACKOFF_MS', 2000, 1, 3_600_000),
    host,
    dataDir,
    databaseUrl,
    publicUrl,
    maxUploadBytes: integer('MAX_UPLOAD_BYTES', 5 * 1024 ** 3, 1),
    maxArtworkBytes: integer('MAX_ARTWORK_BYTES', 20 * 1024 ** 2, 1),
    // Signed URLs live at most 7 days, the cap both GCS and S3 put on theirs.
    uploadUrlTtlMs: integer('UPLOAD_URL_TTL_SECONDS', 3600, 1, 7 * 24 * 3600) * 1000,
    downloadUrlTtlMs: integer('DOWNLOAD_URL_TTL_SECONDS', 3600, 1, 7 * 24 * 3600) * 1000,
    validateResponses: boolean('VALIDATE_RESPONSES', false),
    rateLimit: { perSecond: integer('RATE_LIMIT_PER_SECOND', 100, 0), burst: integer('RATE_LIMIT_BURST', 300, 1) },
    logLevel,
    shutdownGraceMs: integer('SHUTDOWN_GRACE_SECONDS', 30, 0, 3600) * 1000,
  };
  if (problems.length > 0) throw new ConfigError(`The configuration is not valid:\n  - ${problems.join('\n  - ')}`);

  let signingSecret: Buffer;
  if (env.SIGNING_SECRET) {
    if (env.SIGNING_SECRET.length < 32) throw new ConfigError('SIGNING_SECRET is too short: give at least 32 characters of random text, or leave it unset to have one generated in DATA_DIR.');
    signingSecret = Buffer.from(env.SIGNING_SECRET);
  } else {
    signingSecret = generatedSecret(dataDir, 'signingSecret');
  }
  return { ...config, signingSecret };
}

/** A secret kept in DATA_DIR/secrets.json, made on first use. */
function generatedSecret(dataDir: string, name: string): Buffer {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'secrets.json');
  const secrets: Record<string, string> = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  if (!secrets[name]) {
    secrets[name] = randomBytes(32).toString('base64url');
    writeFileSync(file, JSON.stringify(secrets, null, 2) + '\n', { mode: 0o600 });
  }
  return Buffer.from(secrets[name]);
}

/** For the entry points: the configuration, or a message on stderr and exit code 2. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
}
