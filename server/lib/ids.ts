import { randomBytes } from 'node:crypto';

const alphabet = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

/**
 * A new opaque id: a short prefix naming the kind (for people reading logs;
 * clients must not parse it) and 16 random base32 characters (80 bits).
 */
export function newId(prefix: 'usr' | 'tok' | 'pur' | 'prj' | 'box' | 'ply' | 'upl' | 'art' | 'job' | 'cmt' | 'whk' | 'msg' | 'evt' | 'pup' | 'tup' | 'ses' | 'otl' | 'sev' | 'pky' | 'chl' | 'ntf'): string {
  const bytes = randomBytes(16);
  let id = prefix + '_';
  for (const byte of bytes) id += alphabet[byte & 31];
  return id;
}
