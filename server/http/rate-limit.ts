/**
 * Rate limits, in two places: by client address before authentication (so
 * that a flood of bad tokens, or of guessed signed URLs, is refused before it
 * costs a token lookup), and by user after it (so that one token cannot take
 * the whole server, from however many addresses).
 *
 * Each is a fixed window of rate-limiter-flexible: `burst` requests per
 * ceil(burst / perSecond) seconds, which holds the average to `perSecond`. The
 * counters are rows of the database (Db.rateLimiter), so every server process
 * on one database counts together. Past the limit: 429, a problem, with
 * Retry-After (RFC 6585 section 4: "The response representations SHOULD
 * include details explaining the condition, and MAY include a Retry-After
 * header indicating how long to wait before making a new request").
 *
 * Every answer a limit counted says where its client stands, in the fields
 * of draft-ietf-httpapi-ratelimit-headers (its structured-field syntax):
 * `RateLimit-Policy: "address";q=300;w=3` (the limit: q requests per w
 * seconds) and `RateLimit: "address";r=297;t=2` (r requests left, the window
 * ends in t seconds), one list member per limit that counted the request
 * ("address", then "account"), so that a client slows down before the 429.
 */
import type { NextFunction, RequestHandler, Response } from 'express';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimit } from '../config.ts';
import type { Db } from '../store/db.ts';
import { addressKey } from '../lib/client-address.ts';
import { HttpProblem } from '../lib/problems.ts';

const passThrough: RequestHandler = (_req, _res, next) => next();

function limiter(db: Db, keyPrefix: string, { perSecond, burst }: RateLimit): RateLimiterAbstract {
  return db.rateLimiter({ keyPrefix, points: burst, durationSeconds: Math.max(1, Math.ceil(burst / perSecond)) });
}

/** Limits by the client's address (req.ip, which follows TRUST_PROXY). */
export function rateLimitByAddress(db: Db, limit: RateLimit): RequestHandler {
  if (limit.perSecond === 0) return passThrough;
  const counters = limiter(db, 'ip', limit);
  return (req, res, next) => consume(counters, addressKey(req.ip ?? req.socket.remoteAddress ?? 'unknown'), limit, { policy: 'address', whose: 'from your address' }, res, next);
}

/** Limits by the authenticated user; requests without one (signed URLs) are limited by address only. */
export function rateLimitByUser(db: Db, limit: RateLimit): RequestHandler {
  if (limit.perSecond === 0) return passThrough;
  const counters = limiter(db, 'user', limit);
  return (req, res, next) => (req.user ? consume(counters, req.user.id, limit, { policy: 'account', whose: 'for your account' }, res, next) : next());
}

async function consume(counters: RateLimiterAbstract, key: string, { perSecond, burst }: RateLimit, { policy, whose }: { policy: string; whose: string }, res: Response, next: NextFunction) {
  const window = Math.max(1, Math.ceil(burst / perSecond));
  try {
    await consumeOrRefuse(
      counters,
      key,
      (retryAfter) => `Too many requests ${whose}: the limit is ${burst} per ${window} s (${perSecond} per second on average). Retry after ${retryAfter} second(s).`,
      (remaining, msBeforeNext) => announce(res, policy, { quota: burst, window, remaining, msBeforeNext }),
    );
    next();
  } catch (error) {
    next(error);
  }
}

/**
 * Counts one request against `key`, or refuses it: a 429 problem with
 * Retry-After, whose detail `explain` writes from the seconds to wait. The
 * one refusal of every rate limit, those of the HTTP layer and those of a
 * service (password attempts, listeners' comment writes) alike. `counted`
 * hears where the key stands afterwards, refused or not.
 */
export async function consumeOrRefuse(
  counters: RateLimiterAbstract,
  key: string,
  explain: (retryAfterSeconds: number) => string,
  counted: (remaining: number, msBeforeNext: number) => void = () => {},
): Promise<void> {
  try {
    const outcome = await counters.consume(key);
    counted(outcome.remainingPoints, outcome.msBeforeNext);
  } catch (outcome) {
    if (!(outcome instanceof RateLimiterRes)) throw outcome;
    counted(0, outcome.msBeforeNext);
    // draft-ietf-httpapi-ratelimit-headers: "the Retry-After field value SHOULD NOT reference a point in time earlier
    // than the reset parameter"; both are the window's end, rounded up, and Retry-After is at least 1.
    const retryAfter = Math.max(1, secondsUntil(outcome.msBeforeNext));
    throw new HttpProblem('rate-limited', explain(retryAfter), { headers: { 'Retry-After': String(retryAfter) } });
  }
}

const secondsUntil = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/**
 * The RateLimit-Policy and RateLimit fields of one limit, each a list
 * member appended to what an earlier limit set. The draft: RateLimit-Policy
 * "is a non-empty List of Quota Policy Items. The Item value MUST be a
 * String", with "q" the quota and "w" the window in seconds; RateLimit is "a
 * List of Service Limit Items", with "r" the remaining quota units and "t"
 * "the number of seconds until additional quota associated with the quota
 * policy is made available". No partition key (pk): it would only name the
 * client's own address or account back to it.
 */
function announce(res: Response, policy: string, { quota, window, remaining, msBeforeNext }: { quota: number; window: number; remaining: number; msBeforeNext: number }) {
  if (res.headersSent) return;
  appendListMember(res, 'RateLimit-Policy', `"${policy}";q=${quota};w=${window}`);
  appendListMember(res, 'RateLimit', `"${policy}";r=${Math.max(0, remaining)};t=${secondsUntil(msBeforeNext)}`);
}

/** RFC 9651 §3.1: "lists can have their members split across multiple lines of the same header or trailer section"; one line, members joined by ", ", is the same list. */
function appendListMember(res: Response, name: string, member: string) {
  const existing = res.getHeader(name);
  res.setHeader(name, existing === undefined ? member : `${String(existing)}, ${member}`);
}

