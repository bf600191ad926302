/**
 * `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header, with
 * Stripe's semantics): a client that sends a key with a POST, and sends the
 * same request again with it (its connection dropped before the answer came),
 * gets the first answer again instead of a second player. The operations that
 * take the header are those whose spec lists the `Idempotency-Key` parameter:
 * every POST a token may call that creates or changes something.
 *
 * - Same key, same request, within 24 hours: the first answer, byte for byte
 *   (status, body, and the headers that describe it), with
 *   `Idempotent-Replayed: true`. The draft: "The resource SHOULD respond
 *   with the result of the previously completed operation, success or an
 *   error."
 * - Same key, another request (another operation, body or If-Match): 422.
 *   The draft: "If there is an attempt to reuse an idempotency key with a
 *   different request payload, the resource SHOULD reply with a HTTP 422".
 * - Same key while its first request still runs: 409. The draft: "If the
 *   request is retried, while the original request is still being processed,
 *   the resource SHOULD reply with an HTTP 409".
 *
 * Keys are per account and per credential (`credentialOf`): the same key
 * from two accounts is two keys, and so is the same key from two apps acting
 * for one account, or from an app and the person's own token or session, so
 * that none of them is handed another's answer (issue 28: app B got app A's).
 * A request without an account (a listener's, with a player session or none)
 * has no one to keep its key for, so a key there is refused with 400 rather
 * than ignored: a client that believes it is protected learns that it is not.
 * So is a key on a POST that does not take one (signing in, the tus
 * creation): GET, PUT and DELETE are idempotent already (RFC 9110 §9.2.2),
 * and a key there is ignored.
 *
 * What is not replayed: an answer of 5xx (a fault of the server, not of the
 * request: the draft leaves "500, 502, 503, 504, 429" to the resource's
 * documentation) and 408 or 429 (the request was not carried out): the key
 * is released, and a retry runs anew. Every other answer, 4xx included, is
 * the request's outcome and is replayed, as Stripe does.
 *
 * The answer is stored before it is sent: once a client has it, a retry finds
 * it. What is left open is the moment between the handler's own commit and
 * that write: a process that dies there leaves a claim that lapses after a
 * minute (idempotency-keys.ts), and a retry then runs the request again.
 */
import { createHash } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../lib/logger.ts';
import { CLAIM_LEASE_MS, type IdempotencyKeys, type KeyOwner, type StoredAnswer } from './idempotency-keys.ts';
import { HttpProblem } from '../lib/problems.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** The headers of an answer that are part of it, and replayed with it; the rest (X-Request-Id, RateLimit…) are the retry's own. */
const REPLAYED_HEADERS = ['content-type', 'content-language', 'content-disposition', 'cache-control', 'etag', 'location', 'link'];

/** How often a running request renews its claim: well within the lease, so that a slow database does not let it lapse. */
const RENEW_EVERY_MS = CLAIM_LEASE_MS / 3;
/** A request still running after this long is taken for hung: its claim is left to lapse. */
const RENEW_AT_MOST_MS = 10 * 60_000;
/** How often a process deletes the keys past their 24 hours. */
const SWEEP_EVERY_MS = 60_000;

export interface IdempotencyOptions {
  keys: IdempotencyKeys;
  now: () => number;
  logger: Pick<Logger, 'warn' | 'error'>;
}

/**
 * The key a header names. Its syntax is the draft's ("Idempotency-Key is an
 * Item Structured Header [RFC 8941]. Its value MUST be a String"), and, as
 * Stripe takes it, a bare token: `"abc"` and `abc` are one key. The spec's
 * pattern, checked before this runs, keeps quotes and backslashes out of it.
 */
export const keyOf = (header: string): string => (header.startsWith('"') && header.endsWith('"') && header.length >= 2 ? header.slice(1, -1) : header);

/** JSON with every object's keys in order: two bodies that differ only in key order are one request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, item]) => `${JSON.stringify(name)}:${canonical(item)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * What makes two requests the same, for a key: the method, the URL (the
 * operation and its ids), If-Match (which changes what an update does) and
 * the body as JSON. The draft's "idempotency fingerprint", a "Checksum of the
 * entire request payload", made over the parsed body so that whitespace and
 * key order do not count.
 */
export function fingerprintOf(req: Request): string {
  return createHash('sha256')
    .update(JSON.stringify([req.method, req.originalUrl, req.get('if-match') ?? null]))
    .update('\n')
    .update(canonical(req.body))
    .digest('base64url');
}

/**
 * The credential a key is kept under, beside the account: an OAuth app's grant (its access tokens are renewed every
 * hour, and a retry after a refresh is still the same app's retry), a personal token, or a browser session. A token
 * the sandbox takes without a row of its own has an account of its own already: the account is all there is to tell.
 */
export function credentialOf(auth: Request['auth']): string {
  if (auth?.appId && auth.grantId) return `grant:${auth.appId}:${auth.grantId}`;
  if (auth?.tokenId) return `token:${auth.tokenId}`;
  if (auth?.sessionId) return `session:${auth.sessionId}`;
  return auth?.kind ?? 'none';
}

export function idempotency(options: IdempotencyOptions) {
  const { keys, now, logger } = options;
  let lastSweep = Number.NEGATIVE_INFINITY;
  const sweepNowAndThen = (at: number) => {
    if (at - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = at;
    keys.sweep(at).catch((error) => logger.warn('deleting expired idempotency keys failed', { err: error }));
  };

  const claimOrReplay = async (req: Request, res: Response, next: NextFunction, header: string) => {
    // Which operations take a key is their row's (generated/operations.ts): the parameters the spec gives them.
    const operation = req.operation;
    if (!operation) return next();
    const operationId = operation.id;
    if (!operation.idempotencyKey) {
      return next(refusedKey(`${operationId} does not take Idempotency-Key, so a retry of it would not be recognised. Send it without the header; the API reference lists the operations that take one.`));
    }
    if (!req.user) {
      return next(refusedKey('Idempotency keys are kept per account, and this request has none. Send it with a bearer token (or the account\'s session) to use a key, or without the header.'));
    }
    const key = keyOf(header);
    const owner: KeyOwner = { userId: req.user.id, credential: credentialOf(req.auth) };
    const at = now();
    sweepNowAndThen(at);
    try {
      const state = await keys.claim(owner, key, fingerprintOf(req), operationId, at);
      switch (state.kind) {
        case 'answered':
          return replay(res, state.answer);
        case 'running':
          // Retry-After: the first request's answer is usually a moment away; then the retry gets it.
          return next(
            new HttpProblem('idempotency-key-in-use', 'A request with this Idempotency-Key is still being processed. Retry it with the same key once that one has answered; you will then get its answer.', {
              headers: { 'Retry-After': '1' },
            }),
          );
        case 'reused':
          return next(
            new HttpProblem(
              'idempotency-key-reused',
              `This Idempotency-Key was used for another request${state.operation === operationId ? ' to this operation (another URL, body or If-Match)' : ` (${state.operation})`} in the last 24 hours. Send a new key with each new request; reuse a key only to retry the very same request.`,
              { errors: [{ header: IDEMPOTENCY_HEADER, detail: 'was used for another request' }] },
            ),
          );
        case 'claimed':
          keep(owner, key, state.claim, res, options);
          return next();
      }
    } catch (error) {
      next(error);
    }
  };
  // Only a POST with the header is looked at; every other request (each read) passes on at once, without an async
  // function's promise (issue 32: a small read's cost).
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'POST') return next();
    const header = req.get(IDEMPOTENCY_HEADER);
    if (header === undefined) return next();
    return claimOrReplay(req, res, next, header);
  };
}

function refusedKey(detail: string): HttpProblem {
  return new HttpProblem('validation-error', detail, { errors: [{ header: IDEMPOTENCY_HEADER, detail: 'is not taken here' }] });
}

function replay(res: Response, answer: StoredAnswer) {
  res.status(answer.status);
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  res.setHeader('Idempotent-Replayed', 'true');
  res.end(answer.body);
}

/** Whether an answer of this status is the request's outcome, to be replayed; otherwise the key is released for a retry. */
const isOutcome = (status: number) => status < 500 && status !== 408 && status !== 429;

/**
 * Keeps the answer the request is about to send: its status, its headers,
 * and the bytes written through res.write and res.end. The answer is stored
 * (or the key released) before res.end goes on, so that a client holding
 * the answer finds it stored. Meanwhile the claim is renewed.
 */
function keep(owner: KeyOwner, key: string, claim: string, res: Response, { keys, now, logger }: IdempotencyOptions) {
  const started = now();
  const renewal = setInterval(() => {
    if (now() - started > RENEW_AT_MOST_MS) return clearInterval(renewal);
    keys.renew(owner, key, claim, now()).catch((error) => logger.warn('renewing an idempotency key\'s claim failed', { err: error }));
  }, RENEW_EVERY_MS);
  renewal.unref();

  const chunks: Buffer[] = [];
  const bytesOf = (chunk: unknown, encoding: unknown): Buffer =>
    Buffer.isBuffer(chunk) ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk) : Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  const write = res.write;
  const end = res.end;
  res.write = function (this: Response, chunk: unknown, ...rest: unknown[]) {
    if (chunk !== undefined && chunk !== null) chunks.push(bytesOf(chunk, rest[0]));
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as Response['write'];
  res.end = function (this: Response, ...args: unknown[]) {
    res.write = write;
    res.end = end;
    clearInterval(renewal);
    const [chunk, encoding] = args;
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') chunks.push(bytesOf(chunk, encoding));
    const status = res.statusCode;
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const value = res.getHeader(name);
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
    }
    const settled = isOutcome(status)
      ? keys.complete(owner, key, claim, { status, headers, body: Buffer.concat(chunks) }).then((stored) => {
          if (!stored) logger.warn('an idempotency key\'s claim lapsed before its answer was stored; a retry may have run the request again', { key });
        })
      : keys.release(owner, key, claim);
    settled
      .catch((error) => {
        logger.error('storing an idempotency key\'s answer failed; the key is released', { err: error });
        return keys.release(owner, key, claim).catch(() => {});
      })
      .finally(() => (end as (...args: unknown[]) => Response).apply(this, args));
    return this;
  } as Response['end'];
}
