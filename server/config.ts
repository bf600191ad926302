/**
 * Configuration, from environment variables, checked at start. Each bad value
 * gets a message that says what is wrong and what is accepted. Secrets that
 * are not given are generated on first start and kept in DATA_DIR.
 */
import { claimSandboxDataDir, SandboxOnRealDataError } from './resources/sandbox/sandbox-data-guard.ts';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import type { S3Settings } from './blobs/s3-blob-store.ts';
import addressparser from 'nodemailer/lib/addressparser';

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
  /** How long an upload's claim lasts without renewal: a PUT under way renews it every third of this while bytes flow. */
  uploadClaimMs: number;
  validateResponses: boolean;
  /** Requests per user (bearer token's owner), counted after authentication. perSecond = 0 turns it off. */
  rateLimit: RateLimit;
  /** Requests per client address, counted before authentication. perSecond = 0 turns it off. */
  addressRateLimit: RateLimit;
  /** Express's 'trust proxy': which hops' X-Forwarded-For to believe when finding the client's address. */
  trustProxy: TrustProxy;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  shutdownGraceMs: number;
  /** Where audio jobs run: in the server process, or only in `npm run worker` processes. */
  processing: 'in-process' | 'external';
  workerConcurrency: number;
  jobLeaseMs: number;
  jobPollMs: number;
  /** Wait before the first retry of a failed job; doubled for each further one. */
  jobBackoffMs: number;
  /** Where file bytes are kept: on local disk (DATA_DIR/blobs), or in an S3-compatible bucket (`s3`). */
  blobStore: 'disk' | 's3';
  /** The bucket, when blobStore is s3. */
  s3: S3Settings | undefined;
  /**
   * Sandbox mode (`npm run sandbox`, SANDBOX=true): any bearer token is
   * accepted and gets an account of its own with a demo project on first
   * use, and POST /sandbox/reset exists. Never with DATABASE_URL or S3: a
   * sandbox keeps throwaway data only.
   */
  sandbox: boolean;
  /** Bytes each account may keep (its projects' uploaded files and artwork); undefined for no quota. */
  storageQuotaBytes: number | undefined;
  webhooks: WebhookSettings;
  /** Stripe, when this server takes payments for paywalls (server/payments/); undefined when it takes none. */
  stripe: StripeSettings | undefined;
  /** The limits of players' public upload portals (server/resources/portal/). */
  portal: PortalSettings;
  /** How mail goes out (server/mail/); undefined when SMTP_URL is unset, and then nothing is mailed. */
  mail: MailSettings | undefined;
  /**
   * How many collaborators' invitation mails an hour one account may have
   * sent (INVITE_MAILS_PER_INVITER_PER_HOUR) and one address may be sent
   * (INVITE_MAILS_PER_RECIPIENT_PER_HOUR): the server's name is on them.
   */
  invitationMails: { perInviterPerHour: number; perRecipientPerHour: number };
  /**
   * Who may sign up (REGISTRATION): `invite` (the default) through an
   * invitation only, `open` anyone at /signup, `closed` nobody (administrators
   * create accounts).
   */
  registration: 'invite' | 'open' | 'closed';
  /** How long browser sessions live (SESSION_IDLE_DAYS, SESSION_MAX_DAYS). */
  sessions: { idleMs: number; maxMs: number };
  /** Single sign-on against the operator's OpenID provider (server/auth/oidc-client.ts); undefined when not configured. */
  oidc: OidcSettings | undefined;
  /**
   * OAUTH_DYNAMIC_REGISTRATION=true: anyone may register an app at /oauth/register (RFC 7591), as MCP clients
   * expect. Off by default: apps are registered by an account (POST /apps). The sandbox has it on.
   */
  oauthDynamicRegistration: boolean;
  /**
   * OAUTH_ALLOW_ADMIN_SCOPE=true: an OAuth app may ask for, and be granted, the `admin` scope (the server's
   * administration, with the consenting administrator's rights). Off by default: an app asking for it is refused
   * with invalid_scope before the consent page, so no third-party app can administer the server.
   */
  oauthAllowAdminScope: boolean;
}

/** The OpenID provider people may sign in with, and this server's client registration there. */
export interface OidcSettings {
  /** The provider's issuer identifier, as given: its discovery document is at <issuer>/.well-known/openid-configuration. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** What the sign-in page calls the provider: its button reads "Sign in with <name>". */
  name: string;
  /** True for an http:// issuer, accepted only on a loopback host (a provider started by the tests, or on the same machine). */
  insecure: boolean;
}

/**
 * The SMTP server mail is handed to, from SMTP_URL, and the sender, from
 * MAIL_FROM. Only the composition root reads them (server/mail/smtp-mailer.ts).
 */
export interface MailSettings {
  host: string;
  port: number;
  /** smtps://: TLS from the first byte (port 465 by default); smtp://: STARTTLS when offered (port 587 by default). */
  secure: boolean;
  /**
   * smtp:// with credentials to a host other than loopback: STARTTLS is
   * required, so that the password and the links mailed never cross a
   * network in clear, whatever a server (or someone between) advertises.
   */
  requireTls: boolean;
  user: string | undefined;
  password: string | undefined;
  /** The From header of every mail, as given (a bare address, or "Name <address>"). */
  from: string;
}

/** How the server reaches Stripe (server/payments/stripe-provider.ts). */
export interface StripeSettings {
  /** The platform's secret API key (sk_live_… or sk_test_…, or a restricted rk_… key). */
  secretKey: string;
  /** The signing secret of the webhook endpoint Stripe sends events to (whsec_…). */
  webhookSecret: string;
  /**
   * Where the API is, when it is not Stripe's own: a fake on loopback in the
   * tests, or stripe-mock for a self-hoster trying things out. Undefined:
   * the SDK's default, Stripe's API.
   */
  apiBase: URL | undefined;
}

/** What one upload portal accepts; every limit is checked before a byte is sent. */
export interface PortalSettings {
  /** Largest file one uploader may send. */
  maxFileBytes: number;
  /** Bytes one portal (player) may take in, over all of its uploads. */
  maxTotalBytes: number;
  /** Uploads one client address may start per hour, over all portals; 0 for no limit. */
  uploadsPerHour: number;
}

/** How webhook deliveries are made (server/resources/webhooks/). */
export interface WebhookSettings {
  /** Whether subscription URLs may reach loopback and private addresses (self-hosters, tests). Link-local ones never may. */
  allowPrivate: boolean;
  /** The whole of one attempt: connecting, sending, and the answer's headers and (capped) body. */
  timeoutMs: number;
  /** How many deliveries one process makes at once; 0 for none (a server whose deliveries other processes send). */
  concurrency: number;
}

/** `burst` requests per window of ceil(burst / perSecond) seconds. */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

/** What Express's 'trust proxy' setting takes: no, every hop, a number of hops, or addresses and subnets. */
export type TrustProxy = boolean | number | string[];

export class ConfigError extends Error {}

/** DATA_DIR holds the database, the files and the secrets: only the server's user may enter it. */
export const dataDirMode = 0o700;

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

  const rateLimit = { perSecond: integer('RATE_LIMIT_PER_SECOND', 100, 0), burst: integer('RATE_LIMIT_BURST', 300, 1) };
  // The address limit defaults to the user limit, so RATE_LIMIT_PER_SECOND=0 alone turns both off.
  const addressRateLimit = { perSecond: integer('RATE_LIMIT_IP_PER_SECOND', rateLimit.perSecond, 0), burst: integer('RATE_LIMIT_IP_BURST', rateLimit.burst, 1) };
  for (const [prefix, limit] of [['RATE_LIMIT', rateLimit], ['RATE_LIMIT_IP', addressRateLimit]] as const) {
    if (limit.perSecond > 0 && limit.burst < limit.perSecond) {
      problems.push(`${prefix}_BURST=${limit.burst} is below ${prefix}_PER_SECOND=${limit.perSecond}: give a burst of at least the per-second rate.`);
    }
  }

  const { blobStore, s3 } = blobStoreSettings(env, problems, boolean);
  const sandbox = boolean('SANDBOX', false);
  // A sandbox hands an account to anyone with any token: it must never run on data that matters.
  if (sandbox && databaseUrl) problems.push('SANDBOX=true cannot be used with DATABASE_URL: a sandbox accepts any token, so it runs only on a throwaway SQLite database. Start it with npm run sandbox, which makes one.');
  if (sandbox && blobStore === 's3') problems.push('SANDBOX=true cannot be used with BLOB_STORE=s3: a sandbox accepts any token, so it keeps its files only in a throwaway folder. Start it with npm run sandbox, which makes one.');

  const stripe = stripeSettings(env, problems);
  const mail = mailSettings(env, problems);
  const oidc = oidcSettings(env, problems);

  const registration = (env.REGISTRATION || 'invite') as Config['registration'];
  if (!['invite', 'open', 'closed'].includes(registration)) {
    problems.push(`REGISTRATION=${env.REGISTRATION} is not valid: give invite (people sign up through an invitation), open (anyone may sign up) or closed (administrators create accounts).`);
  }
  const day = 24 * 60 * 60 * 1000;
  const sessions = { idleMs: integer('SESSION_IDLE_DAYS', 14, 1, 365) * day, maxMs: integer('SESSION_MAX_DAYS', 90, 1, 3650) * day };
  if (sessions.maxMs < sessions.idleMs) problems.push('SESSION_MAX_DAYS is below SESSION_IDLE_DAYS: a session\'s whole life must be at least its idle time.');

  const config = {
    port,
    stripe,
    mail,
    oidc,
    registration,
    sessions,
    invitationMails: {
      // Enough to share a player with a band and its label at once; a player may have 100 collaborators, invited over hours.
      perInviterPerHour: integer('INVITE_MAILS_PER_INVITER_PER_HOUR', 20, 1, 10_000),
      // An invitation, perhaps renewed twice: more is someone's inbox being filled in the server's name.
      perRecipientPerHour: integer('INVITE_MAILS_PER_RECIPIENT_PER_HOUR', 3, 1, 1_000),
    },
    blobStore,
    s3,
    sandbox,
    // The sandbox: "any app may register there".
    oauthDynamicRegistration: boolean('OAUTH_DYNAMIC_REGISTRATION', sandbox),
    oauthAllowAdminScope: boolean('OAUTH_ALLOW_ADMIN_SCOPE', false),
    // None by default: a self-hosted server's disk is its operator's to share out.
    storageQuotaBytes: env.STORAGE_QUOTA_BYTES ? integer('STORAGE_QUOTA_BYTES', 0, 0) : undefined,
    webhooks: {
      // A sandbox's partners run their receivers on their own machines: there, loopback is the point.
      allowPrivate: boolean('WEBHOOK_ALLOW_PRIVATE', sandbox),
      // Short, so that one slow endpoint cannot hold deliveries up: receivers should answer first and work later.
      timeoutMs: integer('WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
      concurrency: integer('WEBHOOK_CONCURRENCY', 16, 0, 256),
    },
    portal: {
      // Strangers send these: smaller than an account's own uploads by default, and never larger.
      maxFileBytes: integer('PORTAL_MAX_FILE_BYTES', 5 * 1024 ** 3, 1),
      maxTotalBytes: integer('PORTAL_MAX_TOTAL_BYTES', 50 * 1024 ** 3, 1),
      uploadsPerHour: integer('PORTAL_UPLOADS_PER_HOUR', 100, 0),
    },
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
    // A PUT that sends nothing for this long is given up, and a claim not renewed for this long is stale.
    uploadClaimMs: integer('UPLOAD_CLAIM_SECONDS', 60, 1, 3600) * 1000,
    validateResponses: boolean('VALIDATE_RESPONSES', false),
    rateLimit,
    addressRateLimit,
    trustProxy: trustProxy(env.TRUST_PROXY, problems),
    logLevel,
    shutdownGraceMs: integer('SHUTDOWN_GRACE_SECONDS', 30, 0, 3600) * 1000,
  };
  if (problems.length > 0) throw new ConfigError(`The configuration is not valid:\n  - ${problems.join('\n  - ')}`);
  // Before anything is written to DATA_DIR (the generated secret below): a sandbox never starts on a real deployment's data.
  if (sandbox) {
    try {
      claimSandboxDataDir(dataDir, dataDirMode);
    } catch (error) {
      if (error instanceof SandboxOnRealDataError) throw new ConfigError(error.message);
      throw error;
    }
  }

  let signingSecret: Buffer;
  if (env.SIGNING_SECRET) {
    if (env.SIGNING_SECRET.length < 32) throw new ConfigError('SIGNING_SECRET is too short: give at least 32 characters of random text, or leave it unset to have one generated in DATA_DIR.');
    signingSecret = Buffer.from(env.SIGNING_SECRET);
  } else {
    signingSecret = generatedSecret(dataDir, 'signingSecret');
  }
  return { ...config, signingSecret };
}

/**
 * STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET, both or neither: a server
 * that could start payments but not hear that they were made would take
 * listeners' money without opening the player. STRIPE_API_BASE points the
 * SDK at another API (tests, stripe-mock).
 */
function stripeSettings(env: Env, problems: string[]): StripeSettings | undefined {
  const secretKey = env.STRIPE_SECRET_KEY || undefined;
  const webhookSecret = env.STRIPE_WEBHOOK_SECRET || undefined;
  let apiBase: URL | undefined;
  if (env.STRIPE_API_BASE) {
    try {
      apiBase = new URL(env.STRIPE_API_BASE);
      if (!['http:', 'https:'].includes(apiBase.protocol) || (apiBase.pathname !== '/' && apiBase.pathname !== '') || apiBase.search) throw new Error();
    } catch {
      problems.push(`STRIPE_API_BASE=${env.STRIPE_API_BASE} is not valid: give the http(s) origin of a Stripe-compatible API, such as http://127.0.0.1:12111 (stripe-mock), or leave it unset for Stripe.`);
    }
  }
  if (!secretKey && !webhookSecret) {
    if (apiBase) problems.push('STRIPE_API_BASE is set, but STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are not: set both to take payments, or unset STRIPE_API_BASE.');
    return undefined;
  }
  // Stripe's keys: "sk_" secret keys and "rk_" restricted keys, each of a mode (test_ or live_).
  if (!secretKey) problems.push('STRIPE_WEBHOOK_SECRET is set but STRIPE_SECRET_KEY is missing: give the secret key (sk_… or rk_…) of the Stripe account that takes payments.');
  else if (!/^(sk|rk)_(test|live)_\S+$/.test(secretKey)) problems.push('STRIPE_SECRET_KEY is not a Stripe secret key: give one that starts with sk_test_, sk_live_, rk_test_ or rk_live_.');
  if (!webhookSecret) {
    problems.push('STRIPE_SECRET_KEY is set but STRIPE_WEBHOOK_SECRET is missing: add a webhook endpoint at <PUBLIC_URL>/api/v1/payments/stripe/webhook in Stripe and give its signing secret (whsec_…).');
  } else if (!/^whsec_\S+$/.test(webhookSecret)) {
    problems.push('STRIPE_WEBHOOK_SECRET is not a webhook signing secret: give the one Stripe shows for the endpoint, which starts with whsec_.');
  }
  return secretKey && webhookSecret ? { secretKey, webhookSecret, apiBase } : undefined;
}

/**
 * SMTP_URL and MAIL_FROM, both or neither. SMTP_URL is
 * smtp[s]://[user[:password]@]host[:port], the user and password
 * percent-encoded; it takes no path or query (nodemailer reads transport
 * options from a query, and a setting should not smuggle in others).
 * Neither is ever echoed with its password.
 */
function mailSettings(env: Env, problems: string[]): MailSettings | undefined {
  const raw = env.SMTP_URL || undefined;
  const from = env.MAIL_FROM || undefined;
  if (!raw) {
    if (from) problems.push('MAIL_FROM is set, but SMTP_URL is not: set SMTP_URL to the SMTP server that sends mail (smtp://user:password@host:587), or unset MAIL_FROM.');
    return undefined;
  }
  const found: string[] = [];
  // user:password@ is shown as user:***@, so that an error message never prints the password.
  const shown = raw.replace(/\/\/([^/@:]*):[^/@]*@/, '//$1:***@');
  const usage = 'give smtp://user:password@host:port (STARTTLS, port 587 by default) or smtps://user:password@host:port (TLS, port 465 by default), with the user and password percent-encoded';
  let url: URL | undefined;
  let user: string | undefined;
  let password: string | undefined;
  try {
    url = new URL(raw);
    user = url.username ? decodeURIComponent(url.username) : undefined;
    password = url.password ? decodeURIComponent(url.password) : undefined;
  } catch {
    found.push(`SMTP_URL=${shown} is not a URL: ${usage}.`);
  }
  if (url && !found.length) {
    if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') found.push(`SMTP_URL=${shown} is not valid: ${usage}.`);
    else if (!url.hostname) found.push(`SMTP_URL=${shown} names no host: ${usage}.`);
    else if ((url.pathname !== '' && url.pathname !== '/') || url.search || url.hash) found.push(`SMTP_URL=${shown} has a path or a query: ${usage}, and nothing after the port.`);
    else if (password && !user) found.push(`SMTP_URL=${shown} has a password but no user: ${usage}.`);
  }
  // RFC 5322 section 3.4: a mailbox is an addr-spec (local-part "@" domain), or a display name and <addr-spec>.
  // A line break would start a header of its own: refused, as anything but one mailbox is.
  const mailbox = from && !/[\r\n]/.test(from) ? addressparser(from, { flatten: true }) : [];
  if (!from) found.push('SMTP_URL is set but MAIL_FROM is missing: give the address mail is sent from, such as "Audio Share <audio@example.org>", one the SMTP server may send as.');
  else if (mailbox.length !== 1 || !/^[^\s@]+@[^\s@]+$/.test(mailbox[0].address)) {
    found.push(`MAIL_FROM=${from} is not valid: give one address, such as audio@example.org or "Audio Share <audio@example.org>".`);
  }
  problems.push(...found);
  if (!url || !from || found.length > 0) return undefined;
  const secure = url.protocol === 'smtps:';
  return {
    // WHATWG URL keeps an IPv6 host in brackets; a socket wants the bare address.
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    requireTls: !secure && user !== undefined && !isLoopbackHost(url.hostname),
    user,
    password,
    from,
  };
}

/** The OIDC_* variables: all four or none. */
const OIDC_VARIABLES = ['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET', 'OIDC_NAME'];

/**
 * OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET and OIDC_NAME, all or
 * none: a provider without its client's credentials cannot be signed in
 * with, and credentials without a provider say nothing. The issuer is an
 * https URL; http is accepted only on a loopback host (127.0.0.0/8, ::1,
 * localhost), where nothing on the network can read or change the tokens on
 * their way.
 */
function oidcSettings(env: Env, problems: string[]): OidcSettings | undefined {
  const given = OIDC_VARIABLES.filter((name) => env[name]);
  if (given.length === 0) return undefined;
  const missing = OIDC_VARIABLES.filter((name) => !env[name]);
  if (missing.length > 0) {
    problems.push(
      `${given.join(', ')} ${given.length === 1 ? 'is' : 'are'} set, but ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing: single sign-on needs all four of OIDC_ISSUER (the provider's issuer URL), OIDC_CLIENT_ID and OIDC_CLIENT_SECRET (this server's client at the provider) and OIDC_NAME (the provider's name on the sign-in page), or none of them.`,
    );
    return undefined;
  }
  const issuer = env.OIDC_ISSUER!.trim();
  let insecure = false;
  try {
    const parsed = new URL(issuer);
    // OpenID Connect Discovery 1.0, section 3: the issuer is a "URL using the https scheme with no query or fragment components".
    if (!['http:', 'https:'].includes(parsed.protocol) || parsed.search || parsed.hash || parsed.username || parsed.password) throw new Error();
    if (parsed.protocol === 'http:') {
      if (!isLoopbackHost(parsed.hostname)) {
        problems.push(`OIDC_ISSUER=${issuer} is not valid: an http:// issuer is accepted only on a loopback host (127.0.0.1, ::1, localhost); give the provider's https:// issuer URL.`);
      }
      insecure = true;
    }
  } catch {
    problems.push(`OIDC_ISSUER=${issuer} is not valid: give the provider's issuer URL, such as https://auth.example.org/realms/main, without a query or credentials (its discovery document is at <issuer>/.well-known/openid-configuration).`);
  }
  const name = env.OIDC_NAME!.trim();
  // Shown on the sign-in page's button: plain text of a sensible length.
  if (name.length === 0 || name.length > 60 || /\p{Cc}/u.test(name)) problems.push(`OIDC_NAME=${env.OIDC_NAME} is not valid: give the provider's name as people know it (up to 60 characters), such as Authentik or Google.`);
  return { issuer, clientId: env.OIDC_CLIENT_ID!, clientSecret: env.OIDC_CLIENT_SECRET!, name, insecure };
}

/** 127.0.0.0/8, ::1 and localhost: addresses that never leave the machine. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.split('.')[0] === '127';
  // The URL parser writes every spelling of ::1 (0:0:0:0:0:0:0:1 and the like) as ::1.
  return host === '::1';
}

/** The S3_* variables, each of which means something only with BLOB_STORE=s3. */
const S3_VARIABLES = ['S3_ENDPOINT', 'S3_BUCKET', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_FORCE_PATH_STYLE'];

/**
 * BLOB_STORE and, for s3, the bucket: S3_BUCKET and the keys are required;
 * S3_ENDPOINT is the S3 API of any S3-compatible store (unset: AWS S3 in
 * S3_REGION); S3_FORCE_PATH_STYLE defaults to true with an S3_ENDPOINT (most
 * stores but AWS's address buckets by path), else false.
 */
function blobStoreSettings(env: Env, problems: string[], boolean: (name: string, fallback: boolean) => boolean): Pick<Config, 'blobStore' | 's3'> {
  const blobStore = (env.BLOB_STORE || 'disk') as Config['blobStore'];
  if (blobStore !== 'disk' && blobStore !== 's3') {
    problems.push(`BLOB_STORE=${env.BLOB_STORE} is not valid: give disk (files under DATA_DIR/blobs) or s3 (an S3-compatible bucket, named by S3_BUCKET).`);
    return { blobStore: 'disk', s3: undefined };
  }
  if (blobStore === 'disk') {
    // Settings for a bucket that is not used are a mistake to say, not to ignore: files would quietly go to disk.
    const given = S3_VARIABLES.filter((name) => env[name]);
    if (given.length > 0) problems.push(`${given.join(', ')} ${given.length === 1 ? 'is' : 'are'} set, but BLOB_STORE is disk: set BLOB_STORE=s3 to keep files in the bucket, or unset ${given.length === 1 ? 'it' : 'them'}.`);
    return { blobStore, s3: undefined };
  }

  const bucket = env.S3_BUCKET ?? '';
  // The S3 bucket naming rules (https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html):
  // "between 3 and 63 characters long", "only lowercase letters, numbers, periods (.), and hyphens (-)",
  // "begin and end with a letter or number", "must not contain two adjacent periods", not "formatted as an IP address".
  if (!bucket) problems.push('S3_BUCKET is missing: BLOB_STORE=s3 needs the name of the bucket to keep files in.');
  else if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) || bucket.includes('..') || isIP(bucket) !== 0) {
    problems.push(`S3_BUCKET=${bucket} is not a valid bucket name: give 3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit.`);
  }

  let endpoint = env.S3_ENDPOINT || undefined;
  if (endpoint) {
    try {
      const parsed = new URL(endpoint);
      if (!['http:', 'https:'].includes(parsed.protocol) || parsed.search || parsed.hash || parsed.username || parsed.password) throw new Error();
      endpoint = endpoint.replace(/\/+$/, '');
    } catch {
      problems.push(
        `S3_ENDPOINT=${env.S3_ENDPOINT} is not valid: give the http(s) URL of the S3 API, without a query or credentials, such as https://s3.eu-central-1.amazonaws.com or http://127.0.0.1:7480. Leave it unset for AWS S3.`,
      );
    }
  }

  const region = env.S3_REGION || 'us-east-1';
  if (!/^[a-z0-9-]+$/.test(region)) problems.push(`S3_REGION=${env.S3_REGION} is not valid: give a region name such as us-east-1, eu-central-1 or auto.`);

  const missingKeys = ['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'].filter((name) => !env[name]);
  if (missingKeys.length > 0) {
    problems.push(`${missingKeys.join(' and ')} ${missingKeys.length === 1 ? 'is' : 'are'} missing: BLOB_STORE=s3 needs the access key id and secret of an S3 user that may read and write the bucket.`);
  }

  return {
    blobStore,
    s3: {
      endpoint,
      bucket,
      region,
      accessKeyId: env.S3_ACCESS_KEY_ID ?? '',
      secretAccessKey: env.S3_SECRET_ACCESS_KEY ?? '',
      forcePathStyle: boolean('S3_FORCE_PATH_STYLE', endpoint !== undefined),
    },
  };
}

/**
 * TRUST_PROXY, in the forms Express's 'trust proxy' takes
 * (https://expressjs.com/en/guide/behind-proxies.html): true or false, a
 * number of hops, or a comma-separated list of addresses, subnets
 * (10.0.0.0/8, fd00::/8, or 10.0.0.0/255.0.0.0) and the names loopback,
 * linklocal and uniquelocal. Unset, no X-Forwarded-For is believed: the
 * client is the peer of the TCP connection.
 */
function trustProxy(raw: string | undefined, problems: string[]): TrustProxy {
  if (raw === undefined || raw.trim() === '') return false;
  const value = raw.trim();
  if (/^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value.split(',').map((entry) => entry.trim());
  const bad = entries.filter((entry) => !isProxyAddress(entry));
  if (bad.length > 0) {
    problems.push(
      `TRUST_PROXY=${raw} is not valid (${bad.map((entry) => `"${entry}"`).join(', ')}): give true, false, a number of hops, or a comma-separated list of addresses, subnets (10.0.0.0/8, fd00::/8) and loopback, linklocal or uniquelocal.`,
    );
    return false;
  }
  return entries;
}

function isProxyAddress(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const [address, range, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (range === undefined) return true;
  if (/^\d+$/.test(range)) return Number(range) <= (family === 4 ? 32 : 128);
  // An IPv4 netmask, such as 255.255.0.0, must be ones then zeros.
  if (family !== 4 || isIP(range) !== 4) return false;
  const bits = range.split('.').reduce((word, octet) => word * 256 + Number(octet), 0).toString(2).padStart(32, '0');
  return /^1*0*$/.test(bits);
}

/** A secret kept in DATA_DIR/secrets.json, made on first use. */
function generatedSecret(dataDir: string, name: string): Buffer {
  mkdirSync(dataDir, { recursive: true, mode: dataDirMode });
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
