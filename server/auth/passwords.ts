/**
 * Passwords: the rules a new one must meet, and how they are stored.
 *
 * NIST SP 800-63B, 5.1.1.2 (memorized secret verifiers): "Verifiers SHALL
 * require subscriber-chosen memorized secrets to be at least 8 characters in
 * length" (we ask 12, as the issue does); "Verifiers SHOULD NOT impose other
 * composition rules"; and they "SHALL compare the prospective secrets against
 * a list that contains values known to be commonly-used, expected, or
 * compromised", which includes "repetitive or sequential characters" and
 * "context-specific words, such as the name of the service, the username".
 *
 * Stored with argon2id at OWASP's parameters (Password Storage Cheat Sheet:
 * "Use Argon2id with a minimum configuration of 19 MiB of memory, an
 * iteration count of 2, and 1 degree of parallelism"), as a PHC string that
 * carries them, so that stronger ones later still verify the old hashes.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { hash, verify } from '@node-rs/argon2';
import { badRequest } from '../lib/problems.ts';

export const MIN_PASSWORD_LENGTH = 12;
/** A bound on what argon2 is given to hash: a megabyte "password" costs memory and time for nothing. */
export const MAX_PASSWORD_LENGTH = 256;

/** OWASP's argon2id parameters. `algorithm: 2` is Argon2id (the package's const enum, which type stripping cannot read). */
export const ARGON2_OPTIONS = { algorithm: 2, memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 } as const;

let commonPasswords: Set<string> | undefined;
function common(): Set<string> {
  commonPasswords ??= new Set(
    readFileSync(resolve(import.meta.dirname, 'common-passwords.txt'), 'utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#')),
  );
  return commonPasswords;
}

/** Why a password may not be chosen, or undefined when it may. `context`: the account's email and name, the service's name. */
export function passwordWeakness(password: string, context: readonly string[] = []): string | undefined {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) return `is ${length} characters long; use at least ${MIN_PASSWORD_LENGTH} (a few words make a good one)`;
  if (length > MAX_PASSWORD_LENGTH) return `is over ${MAX_PASSWORD_LENGTH} characters`;
  const lower = password.toLowerCase();
  if (common().has(lower)) return 'is on a list of common passwords that attackers try first; choose another';
  if (/^(.{1,4})\1+$/su.test(lower)) return 'repeats a few characters; choose something less predictable';
  if (isSequence(lower)) return 'is a sequence of characters; choose something less predictable';
  for (const word of context) {
    const clean = word.trim().toLowerCase();
    if (clean.length >= 4 && lower.includes(clean) && length - clean.length < 8) return 'is mostly your email address, your name or this service\'s name; choose something else';
  }
  return undefined;
}

/** "123456789012", "abcdefghijkl": each character one after (or one before) the last. */
function isSequence(password: string): boolean {
  const codes = [...password].map((character) => character.codePointAt(0)!);
  const step = codes[1] - codes[0];
  if (Math.abs(step) !== 1) return false;
  return codes.every((code, index) => index === 0 || code - codes[index - 1] === step || (code === 48 && codes[index - 1] === 57 && step === 1));
}

/** Throws a 400 naming `field` when the password may not be chosen. */
export function requireGoodPassword(password: string, field: string, context: readonly string[] = []): void {
  const weakness = passwordWeakness(password, context);
  if (weakness) throw badRequest(`The password ${weakness}.`, [{ pointer: `/${field}`, detail: `The password ${weakness}.` }]);
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_OPTIONS);
}

/** A hash of nothing anyone knows, verified when there is no account, so that an unknown email takes as long as a wrong password. */
let decoy: Promise<string> | undefined;

/** Whether `password` matches `stored`; with no stored hash, spends the same time and answers false. */
export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (password.length > MAX_PASSWORD_LENGTH * 4) return false;
  if (stored === null) {
    decoy ??= hash('decoy: no account has this password', ARGON2_OPTIONS);
    await verify(await decoy, password).catch(() => false);
    return false;
  }
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}
