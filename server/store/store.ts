/**
 * The store: every repository over one database. `openStore` picks the
 * backend: PostgreSQL when a DATABASE_URL is given, SQLite otherwise.
 */
import { join } from 'node:path';
import type { Db } from './db.ts';
import { openSqlite } from './sqlite-db.ts';
import { openPostgres } from './postgres-db.ts';
import { UserRepository } from '../resources/account/user-repository.ts';
import { TokenRepository } from '../resources/account/token-repository.ts';
import { ProjectRepository } from '../resources/projects/project-repository.ts';
import { BoxRepository } from '../resources/boxes/box-repository.ts';
import { PlayerRepository } from '../resources/players/player-repository.ts';
import { UploadRepository } from '../resources/uploads/upload-repository.ts';
import { JobQueue } from '../jobs/job-queue.ts';

export class Store {
  readonly users: UserRepository;
  readonly tokens: TokenRepository;
  readonly projects: ProjectRepository;
  readonly boxes: BoxRepository;
  readonly players: PlayerRepository;
  readonly uploads: UploadRepository;
  readonly jobs: JobQueue;

  constructor(readonly db: Db) {
    this.users = new UserRepository(db);
    this.tokens = new TokenRepository(db);
    this.projects = new ProjectRepository(db);
    this.boxes = new BoxRepository(db);
    this.players = new PlayerRepository(db);
    this.uploads = new UploadRepository(db);
    this.jobs = new JobQueue(db);
  }

  /** Runs `work` with a store whose repositories share one transaction. */
  transaction<T>(work: (store: Store) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => work(new Store(tx)));
  }

  async ping(): Promise<void> {
    await this.db.query('SELECT 1 AS ok');
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

export async function openStore(options: { databaseUrl?: string; dataDir: string }): Promise<Store> {
  const db = options.databaseUrl ? await openPostgres(options.databaseUrl) : await openSqlite(join(options.dataDir, 'audio-share.sqlite'));
  return new Store(db);
}
