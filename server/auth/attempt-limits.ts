/**
 * Limits on guessing: sign-in, sign-up, password reset and passkey attempts
 * (the accounts rules: "at most 10 failures in 15 minutes" per account "and per address
 * (at most 30)"). Only failures count, so a person who signs in often is
 * never locked out, and a success clears the account's count. The counters
 * are rows of the database (Db.rateLimiter), shared by every process.
 *
 * An attempt takes its point before the secret is checked and gives it back
 * when the secret was right (`reserve`, `attempt`): the count is then never
 * behind the attempts in flight, however many are sent at once.
 *
 * OWASP Authentication Cheat Sheet: "the counter of failed logins should be
 * associated with the account itself, rather than the source IP address, in
 * order to prevent an attacker from making login attempts from a large
 * number of different IP addresses" — and per address, against one address
 * trying many accounts.
 */
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Db } from '../store/db.ts';
import { HttpProblem } from '../lib/problems.ts';
import { addressKey } from '../lib/client-address.ts';


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
    // Points are given back here (a success, a refusal), so no key is refused from memory: it would not hear them.
    this.perAccount = db.rateLimiter({ keyPrefix: 'auth-account', points: FAILURES_PER_ACCOUNT, durationSeconds: WINDOW_SECONDS, blockInMemory: false });
    this.perAddress = db.rateLimiter({ keyPrefix: 'auth-address', points: FAILURES_PER_ADDRESS, durationSeconds: WINDOW_SECONDS, blockInMemory: false });
  }

  /**
   * Takes one attempt from the account's and the address's counters before
   * the secret is checked, or refuses (429, Retry-After) once either has
   * none left. Each take is one atomic upsert (rate-limiter-flexible's
   * consume: "INSERT … ON CONFLICT DO UPDATE SET points = points + 1 …
   * RETURNING points"), so requests sent at once cannot all read "9 used"
   * and all go on to argon2: of 40 at once, 10 get a point and 30 are
   * refused. A reading of the count (get) followed by a later penalty let
   * every one of them through.
   *
   * The attempt ends with `failed` (the point stays: the failure it counted)
   * or `succeeded` (the point comes back); one that ends neither way, such
   * as a refused new password or a fault before the secret was judged, gives
   * its point back when `attempt` returns (nothing was guessed).
   */
  async reserve(attempt: Attempt): Promise<Reservation> {
    const taken: Taken[] = [];
    const reservation = new Reservation(this.perAccount, attempt.account, taken);
    // The account's first, then the address's: an attempt on a locked account is refused before it takes one of the
    // address's points, so that a person retrying their own locked account does not use up their address too.
    const counters: [RateLimiterAbstract, string, number, string][] = [
      ...(attempt.account === undefined ? [] : [[this.perAccount, attempt.account, FAILURES_PER_ACCOUNT, 'for this account'] as [RateLimiterAbstract, string, number, string]]),
      [this.perAddress, addressKey(attempt.address), FAILURES_PER_ADDRESS, 'from your address'],
    ];
    for (const [limiter, key, limit, whose] of counters) {
      try {
        const outcome = await limiter.consume(key);
        taken.push({ counters: limiter, key, until: Date.now() + outcome.msBeforeNext });
      } catch (outcome) {
        // Refused by one counter, the attempt is not made: the point the other gave is given back.
        await reservation.release();
        if (!(outcome instanceof RateLimiterRes)) throw outcome;
        // consume counted the refused point too (its upsert adds before it compares): given back, so that the count
        // stays the number of attempts made, and the ones that succeed can bring it under the limit again.
        await giveBack({ counters: limiter, key, until: Date.now() + outcome.msBeforeNext });
        throw refused(limit, whose, outcome.msBeforeNext);
      }
    }
    return reservation;
  }

  /**
   * Runs `work` with one attempt reserved (see `reserve`), and settles it:
   * a reservation `work` did not mark failed or succeeded is given back.
   */
  async attempt<T>(attempt: Attempt, work: (reservation: Reservation) => Promise<T>): Promise<T> {
    const reservation = await this.reserve(attempt);
    try {
      return await work(reservation);
    } finally {
      await reservation.release();
    }
  }
}

interface Taken {
  counters: RateLimiterAbstract;
  key: string;
  /** When the window that holds the point ends (Date.now() based, as the limiter's rows are). */
  until: number;
}

function refused(limit: number, whose: string, msBeforeNext: number): HttpProblem {
  const retryAfter = Math.max(1, Math.ceil(msBeforeNext / 1000));
  // RFC 6585 section 4: 429 "SHOULD include details explaining the condition, and MAY include a Retry-After header".
  return new HttpProblem(
    'rate-limited',
    `Too many failed attempts ${whose}: at most ${limit} in ${WINDOW_SECONDS / 60} minutes. Try again in ${Math.ceil(retryAfter / 60)} minute(s), or reset your password.`,
    { headers: { 'Retry-After': String(retryAfter) } },
  );
}

/** One attempt's points, held until the secret is judged. */
export class Reservation {
  private settled = false;
  private readonly perAccount: RateLimiterAbstract;
  private readonly account: string | undefined;
  private readonly taken: Taken[];

  constructor(perAccount: RateLimiterAbstract, account: string | undefined, taken: Taken[]) {
    this.perAccount = perAccount;
    this.account = account;
    this.taken = taken;
  }

  /** The secret was wrong: the points stay, as the failure they count. Synchronous, so that nothing after it can undo it. */
  failed(): void {
    this.settled = true;
  }

  /**
   * The secret was right: the points come back, and the account's count is
   * cleared (not the address's: one good password does not excuse a sweep
   * of others). `account` names the account proved when it differs from
   * the one reserved (a reset link proves the account it was mailed to).
   */
  async succeeded(account?: string): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    const cleared = account ?? this.account;
    await Promise.all([
      ...this.taken.filter((point) => point.counters !== this.perAccount).map((point) => giveBack(point)),
      cleared === undefined ? undefined : this.perAccount.delete(cleared),
    ]);
  }

  /** Gives the points back without clearing anything: the attempt ended before its secret was judged. */
  async release(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    await Promise.all(this.taken.map((point) => giveBack(point)));
  }
}

/**
 * A point given back (reward). Not once its window has ended: the row then
 * counts a new window, and -1 in it would be an attempt more than the limit.
 */
async function giveBack({ counters, key, until }: Taken): Promise<void> {
  if (Date.now() < until) await counters.reward(key, 1);
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
