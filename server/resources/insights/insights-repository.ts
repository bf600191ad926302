/**
 * What listeners did through players: plays as player pages report them,
 * downloads as the download endpoint serves them (migrations 21, 31). A
 * listener is kept as who they are (listenerKey: an account, or a digest of
 * a guest's player session; null: Anonymous) and the display name they gave.
 */
import type { Db } from '../../store/db.ts';

export interface PlayRecord {
  playerId: string;
  playId: string;
  fileId: string;
  /** The listener's display name; null for Anonymous. */
  listenerName: string | null;
  /** Who the listener is (insights-service.ts listenerKeyOf); null for Anonymous. What plays are grouped by, never the name. */
  listenerKey: string | null;
  heard: number;
  position: number;
  timeCreated: number;
  timeModified: number;
}

/** Counted plays of one file by one listener (a key, or null for Anonymous). */
export interface PlayTally {
  fileId: string;
  listenerKey: string | null;
  /** The name of the listener's latest play: the name they go by now (a member may rename their account). */
  listenerName: string | null;
  plays: number;
  farthest: number;
  timeLastPlayed: number;
}

type PlayRow = {
  player_id: string;
  play_id: string;
  file_id: string;
  listener_name: string | null;
  listener_key: string | null;
  heard: number | string;
  position: number | string;
  time_created: number | string;
  time_modified: number | string;
};

const fromRow = (row: PlayRow): PlayRecord => ({
  playerId: row.player_id,
  playId: row.play_id,
  fileId: row.file_id,
  listenerName: row.listener_name,
  listenerKey: row.listener_key,
  heard: Number(row.heard),
  position: Number(row.position),
  timeCreated: Number(row.time_created),
  timeModified: Number(row.time_modified),
});

export class InsightsRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  /**
   * Records a report of a play, keeping the largest `heard` and `position`
   * ever reported for it, in one statement (two reports racing each other
   * cannot lower them). A play id already used for another file is left
   * alone: the answer is the stored play, whose file tells the caller.
   * A listener known later (the listener opened a session mid-play) is
   * taken, their name with them: the two come from one listener or not at all.
   */
  async recordPlay(play: PlayRecord): Promise<PlayRecord> {
    await this.db.execute(
      `INSERT INTO player_plays (player_id, play_id, file_id, listener_name, listener_key, heard, position, time_created, time_modified)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (player_id, play_id) DO UPDATE SET
         heard = CASE WHEN excluded.heard > player_plays.heard THEN excluded.heard ELSE player_plays.heard END,
         position = CASE WHEN excluded.position > player_plays.position THEN excluded.position ELSE player_plays.position END,
         listener_name = CASE WHEN excluded.listener_key IS NULL THEN player_plays.listener_name ELSE excluded.listener_name END,
         listener_key = COALESCE(excluded.listener_key, player_plays.listener_key),
         time_modified = excluded.time_modified
       WHERE player_plays.file_id = excluded.file_id`,
      [play.playerId, play.playId, play.fileId, play.listenerName, play.listenerKey, play.heard, play.position, play.timeCreated, play.timeModified],
    );
    const rows = await this.db.query<PlayRow>('SELECT * FROM player_plays WHERE player_id = $1 AND play_id = $2', [play.playerId, play.playId]);
    return fromRow(rows[0]);
  }

  /**
   * The plays of the player that count (at least `minHeard` seconds heard),
   * per file and listener: grouped by who the listener is (listener_key),
   * never by the name they typed, so that two guests of one name are two
   * listeners and a guest who types a member's name is not that member
   * (issue 28). One listener's plays under several names (a renamed
   * account) are one tally, under the name of the latest.
   */
  async tallyPlays(playerId: string, minHeard: number): Promise<PlayTally[]> {
    const rows = await this.db.query<{ file_id: string; listener_key: string | null; listener_name: string | null; plays: number | string; farthest: number | string; last_played: number | string }>(
      `SELECT file_id, listener_key, listener_name, COUNT(*) AS plays, MAX(position) AS farthest, MAX(time_modified) AS last_played
       FROM player_plays WHERE player_id = $1 AND heard >= $2
       GROUP BY file_id, listener_key, listener_name
       ORDER BY last_played`,
      [playerId, minHeard],
    );
    const tallies = new Map<string, PlayTally>();
    for (const row of rows) {
      // JSON of the pair: no key and file id can make another pair's string.
      const id = JSON.stringify([row.file_id, row.listener_key]);
      const tally = { fileId: row.file_id, listenerKey: row.listener_key, listenerName: row.listener_name, plays: Number(row.plays), farthest: Number(row.farthest), timeLastPlayed: Number(row.last_played) };
      const seen = tallies.get(id);
      // Rows come oldest first: the last one seen holds the name the listener goes by now.
      if (seen) Object.assign(seen, { listenerName: tally.listenerName, plays: seen.plays + tally.plays, farthest: Math.max(seen.farthest, tally.farthest), timeLastPlayed: tally.timeLastPlayed });
      else tallies.set(id, tally);
    }
    return [...tallies.values()];
  }

  /**
   * The plays a listener made under other keys become theirs: a player
   * session renewed (it gained a password, an invite, a purchase) has a new
   * id, and so a new key, but is the same listener; its former keys are
   * taken over by the one it has now.
   */
  async rekey(playerId: string, formerKeys: string[], key: string): Promise<void> {
    if (formerKeys.length === 0) return;
    const placeholders = formerKeys.map((_, index) => `$${index + 3}`).join(', ');
    await this.db.execute(`UPDATE player_plays SET listener_key = $2 WHERE player_id = $1 AND listener_key IN (${placeholders})`, [playerId, key, ...formerKeys]);
  }

  /** Counts one download of the file through the player's view. */
  async countDownload(playerId: string, fileId: string): Promise<void> {
    await this.db.execute(
      `INSERT INTO player_downloads (player_id, file_id, downloads) VALUES ($1, $2, 1)
       ON CONFLICT (player_id, file_id) DO UPDATE SET downloads = player_downloads.downloads + 1`,
      [playerId, fileId],
    );
  }

  /** The downloads through the player, per file. */
  async downloads(playerId: string): Promise<Map<string, number>> {
    const rows = await this.db.query<{ file_id: string; downloads: number | string }>('SELECT file_id, downloads FROM player_downloads WHERE player_id = $1', [playerId]);
    return new Map(rows.map((row) => [row.file_id, Number(row.downloads)]));
  }
}
