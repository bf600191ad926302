/**
 * A token bucket per caller (the user, or the client address when there is
 * none): `burst` requests at once, refilled at `perSecond`. Past that, 429
 * with Retry-After. perSecond = 0 turns the limit off. The buckets live in
 * memory, so each server process limits on its own.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Clock } from '../lib/clock.ts';
import { HttpProblem } from './problem.ts';

export function rateLimit({ perSecond, burst }: { perSecond: number; burst: number }, clock: Clock) {
  const buckets = new Map<string, { tokens: number; updated: number }>();
  return (req: Request, _res: Response, next: NextFunction) => {
    if (perSecond === 0) return next();
    const key = req.user?.id ?? `ip:${req.ip}`;
    const now = clock.now();
    const bucket = buckets.get(key) ?? { tokens: burst, updated: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.updated) / 1000) * perSecond);
    bucket.updated = now;
    buckets.set(key, bucket);
    if (bucket.tokens < 1) {
      const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
      return next(
        new HttpProblem(429, 'rate-limited', `Rate limit of ${perSecond} requests per second (bursts of ${burst}) exceeded. Retry after ${retryAfter} second(s).`, {
          headers: { 'Retry-After': String(retryAfter) },
        }),
      );
    }
    bucket.tokens -= 1;
    // Forget callers that have been quiet long enough to have a full bucket again.
    if (buckets.size > 10_000) for (const [k, b] of buckets) if (now - b.updated > (burst / perSecond) * 1000) buckets.delete(k);
    next();
  };
}
