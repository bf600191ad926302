/**
 * Migration 10: purchases made by paying (Stripe Checkout), besides the
 * records tests insert.
 * - checkout_id: the payment page the purchase was paid on; unique, so that
 *   the same payment heard twice (the webhook retried, the buyer's return
 *   and the webhook at once) is one purchase. Rows without one (tests'
 *   records) may be many: both backends let NULLs repeat in a unique index.
 * - buyer_session: the player session that started the payment, which a
 *   `customer` paywall opens for.
 * - amount, currency: what was charged; receipt_url: the provider's receipt.
 */
export function paymentsSchema(bigint: string): string {
  return `
ALTER TABLE player_purchases ADD COLUMN checkout_id TEXT;
ALTER TABLE player_purchases ADD COLUMN buyer_session TEXT;
ALTER TABLE player_purchases ADD COLUMN amount ${bigint};
ALTER TABLE player_purchases ADD COLUMN currency TEXT;
ALTER TABLE player_purchases ADD COLUMN receipt_url TEXT;
CREATE UNIQUE INDEX player_purchases_checkout ON player_purchases(checkout_id);
CREATE INDEX player_purchases_buyer ON player_purchases(player_id, buyer_session);
`;
}
