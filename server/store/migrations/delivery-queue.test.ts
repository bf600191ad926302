/**
 * Migration 32 moves the deliveries that still had a job into their own
 * queue: a server upgraded with a backlog, or with a delivery under way when
 * it stopped, still sends every one of them, at the time its job would have.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backends, createTestDatabase } from '../../testing/databases.ts';
import type { Db } from '../db.ts';
import { sqliteMigrations } from './sqlite.ts';
import { postgresMigrations } from './postgres.ts';

describe.each(backends)('migration 32 on %s', (backend) => {
  it('queues each pending delivery when its job was due or its lease ends, and drops the delivery jobs', async () => {
    const database = await createTestDatabase(backend);
    const open = async (upTo: number): Promise<Db> => {
      if (backend === 'sqlite') {
        const { openSqlite } = await import('../sqlite-db.ts');
        return openSqlite(join(database.dataDir, 'audio-share.sqlite'), sqliteMigrations.filter((migration) => migration.version <= upTo));
      }
      const { openPostgres } = await import('../postgres-db.ts');
      return openPostgres(database.databaseUrl!, postgresMigrations.filter((migration) => migration.version <= upTo));
    };
    try {
      const before = await open(31);
      await before.execute("INSERT INTO users (id, email, time_created) VALUES ('usr_1', 'q@example.com', 0)");
      await before.execute(
        "INSERT INTO webhooks (id, user_id, label, url, events, enabled, secret, time_created, time_modified) VALUES ('whk_1', 'usr_1', '', 'https://203.0.113.7/', '[]', 1, 's', 0, 0)",
      );
      const delivery = (id: string, status: string) =>
        before.execute(`INSERT INTO webhook_deliveries (id, webhook_id, event_id, type, body, status, attempts, next_attempt, time_created) VALUES ($1, 'whk_1', 'evt_1', 'project.created', '{}', $2, '[]', 0, 0)`, [id, status]);
      const job = (id: string, deliveryId: string, status: string, attempts: number, runAt: number, leaseUntil: number | null) =>
        before.execute(`INSERT INTO jobs (id, kind, payload, status, attempts, max_attempts, run_at, lease_until, time_created) VALUES ($1, 'deliver-webhook', $2, $3, $4, 8, $5, $6, 0)`, [
          id,
          JSON.stringify({ deliveryId }),
          status,
          attempts,
          runAt,
          leaseUntil,
        ]);
      await delivery('msg_waiting', 'pending');
      await job('job_1', 'msg_waiting', 'queued', 2, 5000, null);
      await delivery('msg_running', 'pending');
      await job('job_2', 'msg_running', 'running', 1, 100, 7000);
      await delivery('msg_sent', 'succeeded');
      await job('job_3', 'msg_sent', 'done', 1, 100, null);
      await before.execute(`INSERT INTO jobs (id, kind, payload, status, attempts, max_attempts, run_at, time_created) VALUES ('job_audio', 'analyse-audio', '{}', 'queued', 0, 5, 0, 0)`);
      await before.close();

      const after = await open(Number.POSITIVE_INFINITY);
      try {
        const rows = await after.query<{ id: string; due_at: number | null; tries: number; claims: number; worker: string | null }>(
          'SELECT id, due_at, tries, claims, worker FROM webhook_deliveries ORDER BY id',
        );
        expect(rows.map((row) => ({ ...row, due_at: row.due_at === null ? null : Number(row.due_at) }))).toEqual([
          { id: 'msg_running', due_at: 7000, tries: 1, claims: 1, worker: null },
          { id: 'msg_sent', due_at: null, tries: 0, claims: 0, worker: null },
          { id: 'msg_waiting', due_at: 5000, tries: 2, claims: 2, worker: null },
        ]);
        expect((await after.query<{ id: string }>('SELECT id FROM jobs ORDER BY id')).map((row) => row.id)).toEqual(['job_audio']);
      } finally {
        await after.close();
      }
    } finally {
      await database.drop();
    }
  });
});
