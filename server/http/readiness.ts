/**
 * GET /readyz: whether this process can serve requests now, for a load
 * balancer or an orchestrator to decide whether to send it traffic. It is
 * ready when its database answers a trivial query, its blob store answers a
 * cheap check (the bucket is there and these keys may use it; the folder is
 * there and writable), and it is not draining (a SIGTERM began its
 * shutdown). /healthz says only that the process and its database are up;
 * /readyz is what to route by.
 *
 * Like /healthz it is outside /api/v1 and the OpenAPI spec, and is never rate
 * limited. A 503 names what failed; why (with hosts and buckets in it) goes
 * to the log only, since anyone who reaches the port can ask. Each check has a short deadline of its own, so a database or
 * bucket that hangs makes the answer a prompt 503, not a hung probe.
 */
import type { NextFunction, Request, Response } from 'express';
import { HttpProblem } from '../lib/problems.ts';

/** Each check must answer within this, or it counts as failed. */
export const READINESS_TIMEOUT_MS = 2000;

export interface ReadinessPorts {
  /** A trivial query on the database; rejects when it cannot be reached. */
  pingDatabase(): Promise<void>;
  /** The blob store's own cheap check (BlobStore.check). */
  checkBlobStore(timeoutMs: number): Promise<void>;
  /** True once the process has begun to shut down. */
  isDraining(): boolean;
  timeoutMs?: number;
  /** Where a failed check is reported, with its error. */
  onFailure?(check: string, error: unknown): void;
}

type CheckResult = 'ok' | 'failed';

/** `work`, or a rejection after `ms`, whichever comes first. */
async function withDeadline(work: () => Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([work(), late]);
  } finally {
    clearTimeout(timer);
  }
}

export function readinessHandler(ports: ReadinessPorts) {
  const timeoutMs = ports.timeoutMs ?? READINESS_TIMEOUT_MS;
  const run = async (name: string, work: () => Promise<void>): Promise<CheckResult> => {
    try {
      await withDeadline(work, timeoutMs);
      return 'ok';
    } catch (error) {
      ports.onFailure?.(name, error);
      return 'failed';
    }
  };

  return async (_req: Request, res: Response, next: NextFunction) => {
    // A draining process is not ready whatever else holds; the checks still run, so the answer says all that is wrong.
    const [database, blobStore] = await Promise.all([run('database', ports.pingDatabase), run('blobStore', () => ports.checkBlobStore(timeoutMs))]);
    const draining = ports.isDraining();
    // Never cached by anything between the prober and this process: the answer is about this moment.
    const noStore = { 'Cache-Control': 'no-store' };
    if (database === 'ok' && blobStore === 'ok' && !draining) {
      res.set(noStore).json({ status: 'ready' });
      return;
    }
    // What failed, by name; why is in the log (onFailure), since a prober may be anyone and the errors name hosts and buckets.
    const failures = [
      ...(draining ? ['this process is shutting down (draining)'] : []),
      ...(database === 'ok' ? [] : ['the database does not answer']),
      ...(blobStore === 'ok' ? [] : ['the blob store cannot be used']),
    ];
    // `checks` names each check's outcome, for a prober or a person to read; the one problem writer sends it.
    next(new HttpProblem('service-unavailable', `Not ready: ${failures.join('; ')}.`, { headers: noStore, members: { checks: { database, blobStore, draining } } }));
  };
}
