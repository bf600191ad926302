import type { Db } from '../../store/db.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { forUpdate } from '../projects/project-repository.ts';

export interface PlayerRecord {
  id: string;
  projectId: string;
  ownerId: string;
  name: string;
  color: string;
  public: boolean;
  folderId: string | null;
  boxIds: string[] | null;
  options: Schemas['PlayerOptions'];
  upload: Schemas['UploadPortal'] | null;
  payment: Schemas['Payment'] | null;
  collaborators: Schemas['Collaborator'][];
  /** The password's scrypt hash (see player-password.ts), or null when the player has none. */
  passwordHash: string | null;
  /** When the player's link stops opening (milliseconds since the epoch), or null for never. */
  expires: number | null;
  /** Changes with every change to the player; its ETag. */
  version: number;
  timeCreated: number;
  timeModified: number;
}

/** A player to insert: no version yet (it starts at 1), and no password or expiry unless given. */
export type NewPlayer = Omit<PlayerRecord, 'version' | 'passwordHash' | 'expires'> & Partial<Pick<PlayerRecord, 'passwordHash' | 'expires'>>;

/** The fields an update may change. */
export type PlayerChanges = Pick<PlayerRecord, 'name' | 'public' | 'options' | 'payment'>;

type PlayerRow = {
  id: string;
  project_id: string;
  owner_id: string;
  name: string;
  color: string;
  public: number;
  folder_id: string | null;
  box_ids: string | null;
  options: string;
  upload: string | null;
  payment: string | null;
  /** Migration 6; undefined on a database that has not had it. */
  password_hash?: string | null;
  expires?: number | null;
  version: number;
  time_created: number;
  time_modified: number;
};

const json = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

export class PlayerRepository {
  constructor(private db: Db) {}

  /** Inserts a new player, at version 1. */
  async insert(player: NewPlayer): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.execute(
        `INSERT INTO players (id, project_id, owner_id, name, color, public, folder_id, box_ids, options, upload, payment, password_hash, expires, time_created, time_modified)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
        [
          player.id, player.projectId, player.ownerId, player.name, player.color, player.public ? 1 : 0, player.folderId,
          player.boxIds && JSON.stringify(player.boxIds), JSON.stringify(player.options), player.upload && JSON.stringify(player.upload),
          player.payment && JSON.stringify(player.payment), player.passwordHash ?? null, player.expires ?? null, player.timeCreated, player.timeModified,
        ],
      );
      for (const [position, collaborator] of player.collaborators.entries()) {
        await tx.execute(
          `INSERT INTO player_collaborators (player_id, email, role, position) VALUES ($1, $2, $3, $4)
           ON CONFLICT (player_id, email) DO UPDATE SET role = excluded.role`,
          [player.id, collaborator.email, collaborator.role, position],
        );
      }
    });
  }

  /**
   * Reads the player and locks its row until the end of the transaction, so
   * that a read-modify-write (the options are merged into stored JSON, which
   * no portable UPDATE can do) cannot lose a change made in between. Call it
   * inside a transaction.
   */
  async getForUpdate(id: string): Promise<PlayerRecord | undefined> {
    const [row] = await this.db.query<PlayerRow>(`SELECT * FROM players WHERE id = $1${forUpdate(this.db)}`, [id]);
    return row && (await this.withCollaborators([row]))[0];
  }

  /**
   * Writes the changeable fields and bumps the version; answers the new
   * version. The values must come from a getForUpdate in the same transaction.
   */
  async update(id: string, changes: PlayerChanges, now: number): Promise<number> {
    const [row] = await this.db.query<{ version: number }>(
      'UPDATE players SET name = $2, public = $3, options = $4, payment = $5, time_modified = $6, version = version + 1 WHERE id = $1 RETURNING version',
      [id, changes.name, changes.public ? 1 : 0, JSON.stringify(changes.options), changes.payment && JSON.stringify(changes.payment), now],
    );
    if (!row) throw new Error(`player ${id} vanished while its row was locked`);
    return Number(row.version);
  }

  async get(id: string): Promise<PlayerRecord | undefined> {
    const [row] = await this.db.query<PlayerRow>('SELECT * FROM players WHERE id = $1', [id]);
    return row && (await this.withCollaborators([row]))[0];
  }

  /** The players a user owns, newest first. */
  async listOwnedBy(ownerId: string): Promise<PlayerRecord[]> {
    const rows = await this.db.query<PlayerRow>('SELECT * FROM players WHERE owner_id = $1 ORDER BY time_created DESC, id', [ownerId]);
    return this.withCollaborators(rows);
  }

  private async withCollaborators(rows: PlayerRow[]): Promise<PlayerRecord[]> {
    const collaborators = new Map<string, Schemas['Collaborator'][]>();
    if (rows.length > 0) {
      const found = await this.db.query<{ player_id: string; email: string; role: string }>(
        `SELECT player_id, email, role FROM player_collaborators WHERE player_id IN (${rows.map((_, i) => `$${i + 1}`).join(', ')}) ORDER BY position`,
        rows.map((row) => row.id),
      );
      for (const row of found) {
        const list = collaborators.get(row.player_id) ?? [];
        list.push({ email: row.email, role: row.role as Schemas['CollaboratorRole'] });
        collaborators.set(row.player_id, list);
      }
    }
    return rows.map((row) => ({
      id: row.id,
      projectId: row.project_id,
      ownerId: row.owner_id,
      name: row.name,
      color: row.color,
      public: row.public === 1,
      folderId: row.folder_id,
      boxIds: json<string[]>(row.box_ids),
      options: JSON.parse(row.options),
      upload: json(row.upload),
      payment: json(row.payment),
      collaborators: collaborators.get(row.id) ?? [],
      passwordHash: row.password_hash ?? null,
      expires: row.expires === null || row.expires === undefined ? null : Number(row.expires),
      version: row.version,
      timeCreated: row.time_created,
      timeModified: row.time_modified,
    }));
  }
}
