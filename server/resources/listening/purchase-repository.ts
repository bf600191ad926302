/**
 * Purchases of players' paywalls. Payment itself (Stripe) comes with the
 * paywall issue; until then a purchase is a record that tests create here,
 * and the paywall is enforced against these records: a `customer` paywall
 * opens for the session that holds the purchase, an `everyone` paywall for
 * every listener once any purchase exists.
 */
import type { Db } from '../../store/db.ts';

export interface PurchaseRecord {
  id: string;
  playerId: string;
  timeCreated: number;
}

export class PurchaseRepository {
  constructor(private db: Db) {}

  async insert(purchase: PurchaseRecord): Promise<void> {
    await this.db.execute('INSERT INTO player_purchases (id, player_id, time_created) VALUES ($1, $2, $3)', [purchase.id, purchase.playerId, purchase.timeCreated]);
  }

  /** Whether this purchase exists and is of this player. */
  async exists(playerId: string, purchaseId: string): Promise<boolean> {
    const rows = await this.db.query('SELECT 1 AS found FROM player_purchases WHERE id = $1 AND player_id = $2', [purchaseId, playerId]);
    return rows.length > 0;
  }

  /** Whether anyone has paid for this player. */
  async any(playerId: string): Promise<boolean> {
    const rows = await this.db.query('SELECT 1 AS found FROM player_purchases WHERE player_id = $1 LIMIT 1', [playerId]);
    return rows.length > 0;
  }
}
