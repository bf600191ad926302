import { byCodeUnit, type Db, type SqlValue } from '../../store/db.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { forUpdate } from '../projects/project-repository.ts';
import { newInviteNonce } from './invite-links.ts';

export interface PlayerRecord {
  id: string;
  projectId: string;
  /** The owner of the player's project, whose player it is: it is listed as theirs, and its checkouts pay them. */
  ownerId: string;
  /** Who created the player: the owner, or an admin or editor of the project. Kept for the record; it grants nothing. */
  createdBy: string;
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

/** A player to insert: no version yet (it starts at 1), no password or expiry unless given, and made by its owner unless `createdBy` says otherwise. */
export type NewPlayer = Omit<PlayerRecord, 'version' | 'passwordHash' | 'expires' | 'createdBy'> & Partial<Pick<PlayerRecord, 'passwordHash' | 'expires' | 'createdBy'>>;

/** The fields an update may change. */
export type PlayerChanges = Pick<PlayerRecord, 'name' | 'public' | 'options' | 'upload' | 'payment' | 'passwordHash' | 'expires'>;

/** A collaborator with their invite: the nonce its link is derived from (invite-links.ts) and when the link was used. */
export interface CollaboratorInviteRecord {
  email: string;
  role: Schemas['CollaboratorRole'];
  nonce: string;
  used: number | null;
  timeInvited: number;
}

type PlayerRow = {
  id: string;
  project_id: string;
  owner_id: string;
  /** Migration 12; null on rows of a database that has not had it. */
  created_by?: string | null;
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

/** Rows per multi-row INSERT: 500 rows of at most 16 values stay far under SQLite's 32,766 parameters and PostgreSQL's 65,535. */
const INSERT_BATCH_ROWS = 500;

/** Inserts `rows` into `into` (a table and its columns), INSERT_BATCH_ROWS rows a statement. */
async function insertRows(db: Db, into: string, rows: SqlValue[][]): Promise<void> {
  for (let start = 0; start < rows.length; start += INSERT_BATCH_ROWS) {
    const chunk = rows.slice(start, start + INSERT_BATCH_ROWS);
    let parameter = 0;
    const values = chunk.map((row) => `(${row.map(() => `$${++parameter}`).join(', ')})`);
    await db.execute(`INSERT INTO ${into} VALUES ${values.join(', ')}`, chunk.flat());
  }
}

const json = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

export class PlayerRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  /** Inserts a new player, at version 1. */
  async insert(player: NewPlayer): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.execute(
        `INSERT INTO players (id, project_id, owner_id, created_by, name, color, public, folder_id, box_ids, options, upload, payment, password_hash, expires, time_created, time_modified)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
        [
          player.id, player.projectId, player.ownerId, player.createdBy ?? player.ownerId, player.name, player.color, player.public ? 1 : 0, player.folderId,
          player.boxIds && JSON.stringify(player.boxIds), JSON.stringify(player.options), player.upload && JSON.stringify(player.upload),
          player.payment && JSON.stringify(player.payment), player.passwordHash ?? null, player.expires ?? null, player.timeCreated, player.timeModified,
        ],
      );
      for (const [position, collaborator] of player.collaborators.entries()) {
        await tx.execute(
          `INSERT INTO player_collaborators (player_id, email, role, position, invite_nonce, time_invited) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (player_id, email) DO UPDATE SET role = excluded.role`,
          [player.id, collaborator.email, collaborator.role, position, newInviteNonce(), player.timeCreated],
        );
      }
    });
  }

  /**
   * Inserts many new players at once, in one transaction of multi-row
   * INSERTs: the large accounts of the bench and the tests (server/testing/),
   * which `insert` would make a statement per player and per collaborator.
   * The rows are the ones `insert` would leave for each.
   */
  async insertMany(players: NewPlayer[]): Promise<void> {
    const playerRows = players.map((player) => [
      player.id, player.projectId, player.ownerId, player.createdBy ?? player.ownerId, player.name, player.color, player.public ? 1 : 0, player.folderId,
      player.boxIds && JSON.stringify(player.boxIds), JSON.stringify(player.options), player.upload && JSON.stringify(player.upload),
      player.payment && JSON.stringify(player.payment), player.passwordHash ?? null, player.expires ?? null, player.timeCreated, player.timeModified,
    ]);
    const collaboratorRows = players.flatMap((player) =>
      player.collaborators.map((collaborator, position) => [player.id, collaborator.email, collaborator.role, position, newInviteNonce(), player.timeCreated]),
    );
    await this.db.transaction(async (tx) => {
      await insertRows(tx, 'players (id, project_id, owner_id, created_by, name, color, public, folder_id, box_ids, options, upload, payment, password_hash, expires, time_created, time_modified)', playerRows);
      await insertRows(tx, 'player_collaborators (player_id, email, role, position, invite_nonce, time_invited)', collaboratorRows);
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
      `UPDATE players SET name = $2, public = $3, options = $4, payment = $5, password_hash = $6, expires = $7, time_modified = $8, upload = $9, version = version + 1
       WHERE id = $1 RETURNING version`,
      [
        id, changes.name, changes.public ? 1 : 0, JSON.stringify(changes.options), changes.payment && JSON.stringify(changes.payment),
        changes.passwordHash, changes.expires, now, changes.upload && JSON.stringify(changes.upload),
      ],
    );
    if (!row) throw new Error(`player ${id} vanished while its row was locked`);
    return Number(row.version);
  }

  /**
   * The player with its collaborators, in one statement: every GET /players/{id} reads it, and a second statement for
   * the collaborators cost about half as much again as the player's own (issue 32). They come as a JSON array of
   * [email, role] pairs in invitation order (`position`, as withCollaborators orders them); null or `[]` for none.
   */
  async get(id: string): Promise<PlayerRecord | undefined> {
    const [row] = await this.db.query<PlayerRow & { collaborators: string | null }>(`SELECT players.*, ${collaboratorsJson(this.db)} AS collaborators FROM players WHERE id = $1`, [id]);
    return row && recordOf(row, collaboratorsOf(row.collaborators));
  }

  /**
   * `get`, with the owner of the player's project read in the same statement (from projects, which decide, not from
   * players.owner_id): what a player read checks access by (players-service.ts loadPlayerAs), so that the owner's
   * own reads, the most frequent, take one statement in all (issue 32).
   */
  async getWithProjectOwner(id: string): Promise<{ player: PlayerRecord; projectOwnerId: string | null } | undefined> {
    const [row] = await this.db.query<PlayerRow & { collaborators: string | null; project_owner_id: string | null }>(
      `SELECT players.*, ${collaboratorsJson(this.db)} AS collaborators,
         (SELECT projects.owner_id FROM projects WHERE projects.id = players.project_id) AS project_owner_id
       FROM players WHERE id = $1`,
      [id],
    );
    return row && { player: recordOf(row, collaboratorsOf(row.collaborators)), projectOwnerId: row.project_owner_id };
  }

  /**
   * The players a user owns, newest first: every player of the projects they
   * own, whoever created it, and none of anyone else's projects. Read through
   * the projects, so that it is the project's owner who decides.
   */
  async listOwnedBy(ownerId: string): Promise<PlayerRecord[]> {
    const rows = await this.db.query<PlayerRow>(
      `SELECT players.* FROM players JOIN projects ON projects.id = players.project_id
       WHERE projects.owner_id = $1 ORDER BY players.time_created DESC, players.id`,
      [ownerId],
    );
    return this.withCollaborators(rows);
  }

  /**
   * A page of listOwnedBy: at most `count` of the players, in its order
   * (newest first, then by id), after `after`, the creation time and id of
   * the player before them (from the newest without one).
   *
   * players.owner_id is the owner of the player's project (migration 12;
   * createPlayer sets it so, and a project keeps its owner), so an index on
   * it (players_owner_page, migration 28) serves the order: the page is a
   * range of the index from `after` on, the same cost at any depth of any
   * account. The list is still read through the projects, as listOwnedBy
   * reads it: a player recorded under another owner (as servers before
   * migration 12 made them) is found through its project by
   * players_project_owner, in two ranges of it (the owner ids below and
   * above the owner's; one probe per project of the owner), and merged in.
   */
  async listOwnedByPage(ownerId: string, after: { timeCreated: number; id: string } | undefined, count: number): Promise<PlayerRecord[]> {
    const id = `players.id${byCodeUnit(this.db)}`;
    const from = after ? ` AND players.time_created <= $3 AND (players.time_created < $3 OR ${id} > $4)` : '';
    const order = `ORDER BY time_created DESC, id${byCodeUnit(this.db)} LIMIT $2`;
    const recordedElsewhere = (comparison: '<' | '>') =>
      `SELECT players.* FROM projects JOIN players ON players.project_id = projects.id
       WHERE projects.owner_id = $1 AND players.owner_id ${comparison} $1${from}`;
    const rows = await this.db.query<PlayerRow>(
      `SELECT * FROM (
         SELECT * FROM (
           SELECT players.* FROM players JOIN projects ON projects.id = players.project_id
           WHERE players.owner_id = $1 AND projects.owner_id = $1${from}
           ORDER BY players.time_created DESC, ${id} LIMIT $2
         ) AS recorded_theirs
         UNION ALL ${recordedElsewhere('<')}
         UNION ALL ${recordedElsewhere('>')}
       ) AS listed ${order}`,
      after ? [ownerId, count, after.timeCreated, after.id] : [ownerId, count],
    );
    return this.withCollaborators(rows);
  }

  /**
   * Deletes the player with its collaborators (and so the roles and invite
   * links they had through it) and its purchases; answers whether it existed.
   */
  async delete(id: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      await tx.execute('DELETE FROM player_purchases WHERE player_id = $1', [id]);
      await tx.execute('DELETE FROM player_collaborators WHERE player_id = $1', [id]);
      return (await tx.execute('DELETE FROM players WHERE id = $1', [id])) > 0;
    });
  }

  /** The player's collaborators with their invites, in the order they were invited. Ones from before invites existed get their nonce now. */
  async invites(playerId: string): Promise<CollaboratorInviteRecord[]> {
    const read = () =>
      this.db.query<{ email: string; role: string; invite_nonce: string | null; invite_used: number | null; time_invited: number }>(
        'SELECT email, role, invite_nonce, invite_used, time_invited FROM player_collaborators WHERE player_id = $1 ORDER BY position, email',
        [playerId],
      );
    let rows = await read();
    if (rows.some((row) => row.invite_nonce === null)) {
      for (const row of rows.filter((row) => row.invite_nonce === null)) {
        // Only where there is still none: two readers at once settle on one nonce, and so on one link.
        await this.db.execute('UPDATE player_collaborators SET invite_nonce = $3 WHERE player_id = $1 AND email = $2 AND invite_nonce IS NULL', [playerId, row.email, newInviteNonce()]);
      }
      rows = await read();
    }
    return rows.map((row) => ({
      email: row.email,
      role: row.role as Schemas['CollaboratorRole'],
      nonce: row.invite_nonce!,
      used: row.invite_used === null ? null : Number(row.invite_used),
      timeInvited: Number(row.time_invited),
    }));
  }

  /** Records the use of this invite; answers false when it was used already or its nonce is no longer current (one statement: two uses at once, one wins). */
  async useInvite(playerId: string, email: string, nonce: string, now: number): Promise<boolean> {
    const changed = await this.db.execute(
      'UPDATE player_collaborators SET invite_used = $4 WHERE player_id = $1 AND email = $2 AND invite_nonce = $3 AND invite_used IS NULL',
      [playerId, email, nonce, now],
    );
    return changed === 1;
  }

  /** Gives the collaborator a new nonce, and so a new, unused link; answers false when there is no such collaborator. */
  async renewInvite(playerId: string, email: string, nonce: string): Promise<boolean> {
    const changed = await this.db.execute('UPDATE player_collaborators SET invite_nonce = $3, invite_used = NULL WHERE player_id = $1 AND email = $2', [playerId, email, nonce]);
    return changed === 1;
  }

  /**
   * Gives the collaborator entry of `fromEmail` to `toEmail` (an account that
   * signed in with the invitation), a change of the player; answers false
   * when there is no such entry, or `toEmail` has one on this player already.
   */
  async moveCollaborator(playerId: string, fromEmail: string, toEmail: string, now: number): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const moved = await tx.execute(
        'UPDATE player_collaborators SET email = $3 WHERE player_id = $1 AND email = $2 AND NOT EXISTS (SELECT 1 FROM player_collaborators WHERE player_id = $1 AND email = $3)',
        [playerId, fromEmail, toEmail],
      );
      if (moved === 0) return false;
      await tx.execute('UPDATE players SET version = version + 1, time_modified = $2 WHERE id = $1', [playerId, now]);
      return true;
    });
  }

  /**
   * Invites `email` with `role`, or changes the role of someone invited
   * already (their link stays: its nonce is kept). A change of the player
   * (its version is bumped). Answers whether the person is new, or
   * 'full' when the player has `limit` collaborators and this one is not
   * among them.
   */
  async inviteCollaborator(playerId: string, email: string, role: string, now: number, limit: number): Promise<'added' | 'changed' | 'full'> {
    return this.db.transaction(async (tx) => {
      // The player's row first: two invitations at once queue here, so the count below stays true.
      await tx.execute('UPDATE players SET version = version + 1, time_modified = $2 WHERE id = $1', [playerId, now]);
      if ((await tx.execute('UPDATE player_collaborators SET role = $3 WHERE player_id = $1 AND email = $2', [playerId, email, role])) === 1) return 'changed';
      const [{ count, last }] = await tx.query<{ count: number; last: number | null }>('SELECT COUNT(*) AS count, MAX(position) AS last FROM player_collaborators WHERE player_id = $1', [playerId]);
      if (Number(count) >= limit) return 'full';
      await tx.execute(
        'INSERT INTO player_collaborators (player_id, email, role, position, invite_nonce, time_invited) VALUES ($1, $2, $3, $4, $5, $6)',
        [playerId, email, role, last === null ? 0 : Number(last) + 1, newInviteNonce(), now],
      );
      return 'added';
    });
  }

  /** Removes the collaborator, a change of the player (its version is bumped); answers false when there is none. */
  async removeCollaborator(playerId: string, email: string, now: number): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      if ((await tx.execute('DELETE FROM player_collaborators WHERE player_id = $1 AND email = $2', [playerId, email])) === 0) return false;
      await tx.execute('UPDATE players SET version = version + 1, time_modified = $2 WHERE id = $1', [playerId, now]);
      return true;
    });
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
    return rows.map((row) => recordOf(row, collaborators.get(row.id) ?? []));
  }
}

/**
 * The player's collaborators as one JSON text, [[email, role], …] in `position` order, for a query over `players`:
 * SQLite's json_group_array (its ORDER BY inside the aggregate since 3.44), PostgreSQL's json_agg, as text in both.
 */
function collaboratorsJson(db: Db): string {
  return db.dialect === 'postgres'
    ? '(SELECT json_agg(json_build_array(c.email, c.role) ORDER BY c.position)::text FROM player_collaborators c WHERE c.player_id = players.id)'
    : '(SELECT json_group_array(json_array(c.email, c.role) ORDER BY c.position) FROM player_collaborators c WHERE c.player_id = players.id)';
}

/** collaboratorsJson's text, as the record's collaborators. */
function collaboratorsOf(text: string | null): Schemas['Collaborator'][] {
  if (text === null) return [];
  return (JSON.parse(text) as Array<[string, Schemas['CollaboratorRole']]>).map(([email, role]) => ({ email, role }));
}

function recordOf(row: PlayerRow, collaborators: Schemas['Collaborator'][]): PlayerRecord {
  return {
    id: row.id,
    projectId: row.project_id,
    ownerId: row.owner_id,
    createdBy: row.created_by ?? row.owner_id,
    name: row.name,
    color: row.color,
    public: row.public === 1,
    folderId: row.folder_id,
    boxIds: json<string[]>(row.box_ids),
    options: JSON.parse(row.options),
    upload: json(row.upload),
    payment: json(row.payment),
    collaborators,
    passwordHash: row.password_hash ?? null,
    expires: row.expires === null || row.expires === undefined ? null : Number(row.expires),
    version: row.version,
    timeCreated: row.time_created,
    timeModified: row.time_modified,
  };
}
