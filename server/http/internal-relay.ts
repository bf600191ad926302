/**
 * Requests this process sends to its own API on a caller's behalf (the MCP
 * server's tool calls, resources/mcp/): they carry a header holding a
 * secret made at start and known to nobody outside the process, so the API
 * can tell them from anyone else's requests without trusting an address.
 *
 * What being relayed changes is kept small, and the caller's token is
 * checked as on any request (its account, expiry and scopes):
 * - the API takes an access token issued for the MCP server (whose tool
 *   call this is) besides its own;
 * - the per-address rate limit, which the caller's request to /mcp has
 *   already passed, does not count the relayed request again under the
 *   loopback address every relayed request comes from.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';

export const RELAY_HEADER = 'x-internal-relay';

const secret = randomBytes(32).toString('base64url');
const secretBytes = Buffer.from(secret);

/** The headers that mark a request as relayed by this process. */
export const relayHeaders = (): Record<string, string> => ({ [RELAY_HEADER]: secret });

/** Whether this request was sent by this process to itself (a constant-time comparison: the secret is not guessed byte by byte). */
export function isRelayed(req: Pick<Request, 'headers'>): boolean {
  const value = req.headers[RELAY_HEADER];
  if (typeof value !== 'string') return false;
  const bytes = Buffer.from(value);
  return bytes.length === secretBytes.length && timingSafeEqual(bytes, secretBytes);
}
