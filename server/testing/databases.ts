/**
 * Throwaway databases for tests: a fresh SQLite file in a temporary folder,
 * or a fresh PostgreSQL database on the server at TEST_POSTGRES_URL (default
 * the local one, trust auth), dropped afterwards.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { openStore, type Store } from '../repositories.ts';

export type Backend = 'sqlite' | 'postgres';
export const backends: Backend[] = ['sqlite', 'postgres'];

export const postgresAdminUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  dataDir: string;
  databaseUrl?: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(backend: Backend): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'audio-share-test-'));
  if (backend === 'sqlite') {
    return { dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const name = `audio_share_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${name}`;
  return {
    dataDir,
    databaseUrl: url.toString(),
    drop: async () => {
      rmSync(dataDir, { recursive: true, force: true });
      const client = new pg.Client({ connectionString: postgresAdminUrl });
      await client.connect();
      try {
        // A pool closed a moment ago may still have a connection winding down. Forcing the drop would terminate it, and
        // a pool that sees its connection terminated takes the process down, by design (postgres-db.ts): so wait,
        // with a deadline, until the test's own connections are gone, and only then force what is left.
        const deadline = Date.now() + 5000;
        while (Date.now() < deadline) {
          const [{ open }] = (await client.query('SELECT count(*)::int AS open FROM pg_stat_activity WHERE datname = $1', [name])).rows;
          if (open === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Per-describe setup: a store of the given backend on a throwaway database. */
export function useTestStore(backend: Backend): { readonly store: Store; readonly database: TestDatabase } {
  let database: TestDatabase | undefined;
  let store: Store | undefined;
  // The test reporter prints this store beside each test's name (scripts/vitest-store-reporter.ts).
  beforeEach((context) => {
    (context.task.meta as { store?: string }).store = backend;
  });
  beforeAll(async () => {
    database = await createTestDatabase(backend);
    store = await openStore(database);
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });
  return {
    get store() {
      return store!;
    },
    get database() {
      return database!;
    },
  };
}
