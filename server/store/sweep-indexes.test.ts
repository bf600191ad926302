/**
 * Migration 29: the statements of the job queue's claims and completions, and
 * of the sweeps that run every ten minutes, read their tables by an index,
 * never by scanning the whole table (a week of jobs, 30 days of deliveries).
 * Each statement is taken as the repository runs it, through a Db that
 * records what it is given, and its plan is asked of the database itself.
 */
import { describe, expect, it } from 'vitest';
import { backends, useTestStore } from '../testing/databases.ts';
import type { Db, SqlValue } from './db.ts';
import { JobQueue } from '../jobs/job-queue.ts';
import { WebhookRepository } from '../resources/webhooks/webhook-repository.ts';
import { OAuthRepository } from '../resources/oauth/oauth-repository.ts';

interface Statement {
  sql: string;
  params: SqlValue[];
}

/** `db`, recording every statement it and its transactions are given before running it. */
function recording(db: Db, seen: Statement[]): Db {
  return {
    dialect: db.dialect,
    query(sql, params = []) {
      seen.push({ sql, params });
      return db.query(sql, params);
    },
    execute(sql, params = []) {
      seen.push({ sql, params });
      return db.execute(sql, params);
    },
    transaction: (work) => db.transaction((tx) => work(recording(tx, seen))),
    rateLimiter: (options) => db.rateLimiter(options),
    close: () => db.close(),
  };
}

/** A statement's plan reads `index` bounded on `column` (a range or an equality on it), not the whole index or table. */
function boundedBy(dialect: 'sqlite' | 'postgres', plan: string[], index: string, column: string): boolean {
  // SQLite: "SEARCH jobs USING INDEX jobs_finished (time_finished<?)".
  if (dialect === 'sqlite') return plan.some((line) => new RegExp(`USING (COVERING )?INDEX ${index} \\(${column}[<=>]`).test(line));
  // PostgreSQL: "Index Scan using jobs_finished on jobs ... Index Cond: (time_finished < '4000'::bigint)".
  const text = plan.join('\n');
  return new RegExp(`(Index|Index Only|Bitmap Index) Scan (using|on) ${index}\\b`).test(text) && new RegExp(`Index Cond: .*\\b${column} [<=>]`).test(text);
}

describe.each(backends)('what the queue and the sweeps read on %s', (backend) => {
  const t = useTestStore(backend);

  /**
   * The plan of `statement`, as lines. On PostgreSQL with sequential scans ruled out for the transaction
   * (enable_seqscan = off): on a table this small it would scan anyway, and a plan that still scans has no index to use.
   */
  async function planOf({ sql, params }: Statement): Promise<string[]> {
    if (backend === 'sqlite') return (await t.store.db.query<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params)).map((row) => row.detail);
    return t.store.db.transaction(async (tx) => {
      await tx.execute('SET LOCAL enable_seqscan = off');
      return (await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params)).map((row) => row['QUERY PLAN']);
    });
  }

  it('claims by the indexes of queued and running jobs, and sweeps jobs, deliveries and OAuth records by the time they expire', async () => {
    const seen: Statement[] = [];
    const db = recording(t.store.db, seen);
    const jobs = new JobQueue(db);
    await jobs.enqueue('sweep-indexes', {}, { now: 1_000 });
    /** The statements `step` runs (INSERTs aside), each with the index and column its plan must be bounded by. */
    const steps: Array<{ what: string; step: () => Promise<unknown>; reads: Array<[index: string, column: string]> }> = [
      {
        what: 'a claim: the probe of lapsed leases (none), the probe of due jobs, the claim of the due one',
        step: async () => expect(await jobs.claimMany('w', 2_000, 60_000, ['sweep-indexes'], 4)).toHaveLength(1),
        reads: [['jobs_leases', 'lease_until'], ['jobs_due', 'run_at'], ['jobs_due', 'run_at']],
      },
      { what: 'the sweep of finished jobs', step: () => jobs.pruneFinished(4_000), reads: [['jobs_finished', 'time_finished']] },
      { what: 'the sweep of old deliveries', step: () => new WebhookRepository(db).pruneDeliveries(4_000), reads: [['webhook_deliveries_by_age', 'time_created']] },
      { what: 'the sweep of expired OAuth records', step: () => new OAuthRepository(db).deleteExpiredRecords(4_000), reads: [['oauth_records_by_expiry', 'time_expires']] },
    ];
    for (const { what, step, reads } of steps) {
      seen.length = 0;
      await step();
      const statements = seen.filter(({ sql }) => !/^\s*INSERT/i.test(sql));
      expect(statements, what).toHaveLength(reads.length);
      for (const [i, [index, column]] of reads.entries()) {
        const plan = await planOf(statements[i]);
        expect(boundedBy(backend, plan, index, column), `${what}: ${statements[i].sql.replace(/\s+/g, ' ')}\n${plan.join('\n')}`).toBe(true);
      }
    }
  });
});
