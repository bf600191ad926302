/**
 * Purchases of players' paywalls: paid on the payment provider's page
 * (server/resources/payments/), or records tests insert. The paywall is
 * enforced against these records: a `customer` paywall opens for the
 * session that holds or made the purchase, an `everyone` paywall for every
 * listener once any purchase exists.
 */
import type { Db } from '../../store/db.ts';

export interface PurchaseRecord {
  id: string;
  playerId: string;
  timeCreated: number;
  /** The provider's payment page it was paid on; absent on records tests insert. */
  checkoutId?: string;
  /** The player session that started the payment. */
  buyerSession?: string;
  amount?: number;
  currency?: string;
  receiptUrl?: string;
}

type PurchaseRow = {
  id: string;
  player_id: string;
  time_created: number | string;
  checkout_id: string | null;
  buyer_session: string | null;
  amount: number | string | null;
  currency: string | null;
  receipt_url: string | null;
};

const fromRow = (row: PurchaseRow): PurchaseRecord => ({
  id: row.id,
  playerId: row.player_id,
  timeCreated: Number(row.time_created),
  ...(row.checkout_id !== null ? { checkoutId: row.checkout_id } : {}),
  ...(row.buyer_session !== null ? { buyerSession: row.buyer_session } : {}),
  ...(row.amount !== null ? { amount: Number(row.amount) } : {}),
  ...(row.currency !== null ? { currency: row.currency } : {}),
  ...(row.receipt_url !== null ? { receiptUrl: row.receipt_url } : {}),
});

export class PurchaseRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  async insert(purchase: PurchaseRecord): Promise<void> {
    await this.db.execute('INSERT INTO player_purchases (id, player_id, time_created) VALUES ($1, $2, $3)', [purchase.id, purchase.playerId, purchase.timeCreated]);
  }

  /**
   * Records a paid checkout once: a second record of the same checkout (the
   * webhook redelivered, or the buyer's return racing it) inserts nothing,
   * and both answer the one purchase. `ON CONFLICT … DO NOTHING` on the
   * unique index decides, in one statement, on either backend.
   */
  async recordCheckout(purchase: PurchaseRecord & { checkoutId: string }): Promise<PurchaseRecord> {
    await this.db.execute(
      `INSERT INTO player_purchases (id, player_id, time_created, checkout_id, buyer_session, amount, currency, receipt_url)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (checkout_id) DO NOTHING`,
      [purchase.id, purchase.playerId, purchase.timeCreated, purchase.checkoutId, purchase.buyerSession ?? null, purchase.amount ?? null, purchase.currency ?? null, purchase.receiptUrl ?? null],
    );
    // A receipt learnt later (the webhook carries none) is kept when the purchase had none.
    if (purchase.receiptUrl) await this.db.execute('UPDATE player_purchases SET receipt_url = $2 WHERE checkout_id = $1 AND receipt_url IS NULL', [purchase.checkoutId, purchase.receiptUrl]);
    return (await this.byCheckout(purchase.checkoutId))!;
  }

  async byCheckout(checkoutId: string): Promise<PurchaseRecord | undefined> {
    const rows = await this.db.query<PurchaseRow>('SELECT * FROM player_purchases WHERE checkout_id = $1', [checkoutId]);
    return rows[0] && fromRow(rows[0]);
  }

  async get(playerId: string, purchaseId: string): Promise<PurchaseRecord | undefined> {
    const rows = await this.db.query<PurchaseRow>('SELECT * FROM player_purchases WHERE id = $1 AND player_id = $2', [purchaseId, playerId]);
    return rows[0] && fromRow(rows[0]);
  }

  /** The first purchase this player session made of this player, if any. */
  async bySession(playerId: string, sessionId: string): Promise<PurchaseRecord | undefined> {
    const rows = await this.db.query<PurchaseRow>('SELECT * FROM player_purchases WHERE player_id = $1 AND buyer_session = $2 ORDER BY time_created LIMIT 1', [playerId, sessionId]);
    return rows[0] && fromRow(rows[0]);
  }

  /**
   * Moves a purchase from the session that started it to the session that
   * claimed it, only if it is still the first one's: answers whether it
   * moved. One statement, so of two claims at once only one moves it.
   */
  async moveToSession(purchaseId: string, fromSession: string, toSession: string): Promise<boolean> {
    return (await this.db.execute('UPDATE player_purchases SET buyer_session = $3 WHERE id = $1 AND buyer_session = $2', [purchaseId, fromSession, toSession])) === 1;
  }

  async listPlayer(playerId: string): Promise<PurchaseRecord[]> {
    const rows = await this.db.query<PurchaseRow>('SELECT * FROM player_purchases WHERE player_id = $1 ORDER BY time_created', [playerId]);
    return rows.map(fromRow);
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
