/**
 * Player passwords, stored only as a salted scrypt hash (RFC 7914), made and
 * checked with node:crypto. The stored form names its parameters, so they
 * can be raised later without breaking the hashes already stored:
 * `scrypt$<N>$<r>$<p>$<salt>$<hash>`, salt and hash in base64url.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * N = 2^14, r = 8, p = 1: the parameters RFC 7914 §2 gives for interactive
 * logins ("N = 2^14 … r = 8 … p = 1"), about 16 MiB and some tens of
 * milliseconds per check; the password check is rate limited besides.
 */
const COST = { N: 16384, r: 8, p: 1 };
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // maxmem: 128 · N · r bytes, and some room, so larger stored parameters still verify.
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...options, maxmem: 256 * (options.N ?? 0) * (options.r ?? 0) + 1024 * 1024 }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Whether the password matches the stored hash; a hash in a form this server does not know matches nothing. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (![N, r, p].every((value) => Number.isSafeInteger(value) && value > 0)) return false;
  const expected = Buffer.from(parts[5], 'base64url');
  const key = await derive(password, Buffer.from(parts[4], 'base64url'), { N, r, p });
  return key.length === expected.length && timingSafeEqual(key, expected);
}
