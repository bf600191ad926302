/**
 * What listeners did through players: plays as player pages report them,
 * downloads as the download endpoint serves them (migration 21). A listener
 * is kept as their display name only (null: Anonymous).
 */
import type { Db } from '../../store/db.ts';

export interface PlayRecord {
  playerId: string;
  playId: string;
  fileId: string;
  /** The listener's display name; null for Anonymous. */
  listenerName: string | null;
  heard: number;
  position: number;
  timeCreated: number;
  timeModified: number;
}

/** Counted plays of one file by one listener (a name, or null for Anonymous). */
export interface PlayTally {
  fileId: string;
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
   * A name given later (the listener opened a session mid-play) is taken.
   */
  async recordPlay(play: PlayRecord): Promise<PlayRecord> {
    await this.db.execute(
      `INSERT INTO player_plays (player_id, play_id, file_id, listener_name, heard, position, time_created, time_modified)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (player_id, play_id) DO UPDATE SET
         heard = CASE WHEN excluded.heard > player_plays.heard THEN excluded.heard ELSE player_plays.heard END,
         position = CASE WHEN excluded.position > player_plays.position THEN excluded.position ELSE player_plays.position END,
         listener_name = COALESCE(excluded.listener_name, player_plays.listener_name),
         time_modified = excluded.time_modified
       WHERE player_plays.file_id = excluded.file_id`,
      [play.playerId, play.playId, play.fileId, play.listenerName, play.heard, play.position, play.timeCreated, play.timeModified],
    );
    const rows = await this.db.query<PlayRow>('SELECT * FROM player_plays WHERE player_id = $1 AND play_id = $2', [play.playerId, play.playId]);
    return fromRow(rows[0]);
  }

  /** The plays of the player that count (at least `minHeard` seconds heard), per file and listener. */
  async tallyPlays(playerId: string, minHeard: number): Promise<PlayTally[]> {
    const rows = await this.db.query<{ file_id: string; listener_name: string | null; plays: number | string; farthest: number | string; last_played: number | string }>(
      `SELECT file_id, listener_name, COUNT(*) AS plays, MAX(position) AS farthest, MAX(time_modified) AS last_played
       FROM player_plays WHERE player_id = $1 AND heard >= $2
       GROUP BY file_id, listener_name`,
      [playerId, minHeard],
    );
    return rows.map((row) => ({
      fileId: row.file_id,
      listenerName: row.listener_name,
      plays: Number(row.plays),
      farthest: Number(row.farthest),
      timeLastPlayed: Number(row.last_played),
    }));
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
