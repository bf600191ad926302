/**
 * What the sandbox does to the database that nothing else does: it removes
 * all an account made, for POST /sandbox/reset. Deleting a project deletes
 * its boxes, players, comments and purchases with it (ON DELETE CASCADE);
 * the bytes of its files become orphans, which the upload sweep removes.
 */
import type { Db } from '../../store/db.ts';

export class SandboxRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  /** Deletes every player and project the user owns, in one transaction. */
  async deleteEverythingOf(userId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.execute('DELETE FROM webhooks WHERE user_id = $1', [userId]);
      // Its notifications (those of its projects would go with them; a reply on another's project would not) and their settings.
      await tx.execute('DELETE FROM notifications WHERE user_id = $1', [userId]);
      await tx.execute('DELETE FROM notification_settings WHERE user_id = $1', [userId]);
      await tx.execute('DELETE FROM players WHERE owner_id = $1', [userId]);
      await tx.execute('DELETE FROM projects WHERE owner_id = $1', [userId]);
    });
  }
}
