/**
 * Limits on guessing: sign-in, sign-up, password reset and passkey attempts
 * (the accounts rules: "at most 10 failures in 15 minutes" per account "and per address
 * (at most 30)"). Only failures count, so a person who signs in often is
 * never locked out, and a success clears the account's count. The counters
 * are rows of the database (Db.rateLimiter), shared by every process.
 *
 * OWASP Authentication Cheat Sheet: "the counter of failed logins should be
 * associated with the account itself, rather than the source IP address, in
 * order to prevent an attacker from making login attempts from a large
 * number of different IP addresses" — and per address, against one address
 * trying many accounts.
 */
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Db } from '../store/db.ts';
import { HttpProblem } from '../http/problem.ts';
import { addressKey } from '../http/rate-limit.ts';

export const WINDOW_SECONDS = 15 * 60;
export const FAILURES_PER_ACCOUNT = 10;
export const FAILURES_PER_ADDRESS = 30;

/** Who is attempting: the account tried (its normalised email, or its id for passkeys) and the client's address. */
export interface Attempt {
  account?: string;
  address: string;
}

export class AttemptLimits {
  private readonly perAccount: RateLimiterAbstract;
  private readonly perAddress: RateLimiterAbstract;

  constructor(db: Db) {
    this.perAccount = db.rateLimiter({ keyPrefix: 'auth-account', points: FAILURES_PER_ACCOUNT, durationSeconds: WINDOW_SECONDS });
    this.perAddress = db.rateLimiter({ keyPrefix: 'auth-address', points: FAILURES_PER_ADDRESS, durationSeconds: WINDOW_SECONDS });
  }

  /** Refuses (429, Retry-After) an attempt once its account or its address has used up its failures. */
  async guard(attempt: Attempt): Promise<void> {
    const [account, address] = await Promise.all([
      attempt.account === undefined ? null : this.perAccount.get(attempt.account),
      this.perAddress.get(addressKey(attempt.address)),
    ]);
    for (const [counter, limit, whose] of [
      [account, FAILURES_PER_ACCOUNT, 'for this account'],
      [address, FAILURES_PER_ADDRESS, 'from your address'],
    ] as const) {
      if (counter && counter.consumedPoints >= limit) {
        const retryAfter = Math.max(1, Math.ceil(counter.msBeforeNext / 1000));
        throw new HttpProblem('rate-limited', `Too many failed attempts ${whose}: at most ${limit} in ${WINDOW_SECONDS / 60} minutes. Try again in ${Math.ceil(retryAfter / 60)} minute(s), or reset your password.`, {
          headers: { 'Retry-After': String(retryAfter) },
        });
      }
    }
  }

  async failed(attempt: Attempt): Promise<void> {
    await Promise.all([
      attempt.account === undefined ? undefined : this.perAccount.penalty(attempt.account, 1),
      this.perAddress.penalty(addressKey(attempt.address), 1),
    ]);
  }

  /** A success clears the account's failures (not the address's: one good password does not excuse a sweep of others). */
  async succeeded(attempt: Attempt): Promise<void> {
    if (attempt.account !== undefined) await this.perAccount.delete(attempt.account);
  }
}

const limitsByDb = new WeakMap<Db, AttemptLimits>();
/** One set of counters per database (their limiters prepare statements once). */
export function attemptLimitsOf(db: Db): AttemptLimits {
  let limits = limitsByDb.get(db);
  if (!limits) {
    limits = new AttemptLimits(db);
    limitsByDb.set(db, limits);
  }
  return limits;
}
