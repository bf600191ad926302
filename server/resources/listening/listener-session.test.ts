/** The player session cookie, invite tokens and password hashes on their own: what they accept and what they refuse. */
import { describe, expect, it } from 'vitest';
import { ListenerSessionSigner, MAX_FORMER_IDS, passwordTag, renewedSession } from './listener-session.ts';
import { inviteMatches, inviteToken } from '../players/invite-links.ts';
import { hashPassword, verifyPassword } from '../players/player-password.ts';
import type { Config } from '../../config.ts';

const secret = Buffer.from('a signing secret of at least thirty-two characters');
const signer = new ListenerSessionSigner(secret);
const now = 1_800_000_000_000;

describe('player session cookie', () => {
  const session = { id: 'pss_abc', expires: now + 1000, userId: 'usr_1', name: 'Alex', password: 'tag', purchaseId: 'pur_1', formerIds: ['pss_old'] };

  it('gives back exactly what was issued, for its player, until it expires', () => {
    const value = signer.issue('ply_1', session);
    expect(signer.verify(value, 'ply_1', now)).toEqual(session);
    expect(signer.verify(value, 'ply_1', now + 1000)).toBeUndefined();
  });

  it('refuses another player, a changed body, a changed signature, another secret, and garbage', () => {
    const value = signer.issue('ply_1', session);
    const [body, signature] = value.split('.');
    const forged = Buffer.from(JSON.stringify({ ...session, userId: 'usr_2' })).toString('base64url');
    expect(signer.verify(value, 'ply_2', now)).toBeUndefined();
    expect(signer.verify(`${forged}.${signature}`, 'ply_1', now)).toBeUndefined();
    expect(signer.verify(`${body}.${signature.slice(0, -2)}AA`, 'ply_1', now)).toBeUndefined();
    expect(new ListenerSessionSigner(Buffer.from('another secret of at least thirty-two characters')).verify(value, 'ply_1', now)).toBeUndefined();
    for (const junk of ['', '.', 'a.b.c', `${'x'.repeat(5000)}.y`]) expect(signer.verify(junk, 'ply_1', now)).toBeUndefined();
  });

  it('refuses a well-signed body of the wrong shape', () => {
    // The signature is right; the id inside is not one this server makes, so the session is not taken.
    const value = signer.issue('ply_1', { id: 'bad id with spaces', expires: now + 1000 });
    expect(signer.verify(value, 'ply_1', now)).toBeUndefined();
  });

  it('renews the id, keeping the session\'s former ids (a few, newest first), and refuses a cookie holding more or malformed ones', () => {
    let renewed = renewedSession({ id: 'pss_first', expires: now + 1000, name: 'Alex' });
    expect(renewed).toMatchObject({ name: 'Alex', formerIds: ['pss_first'] });
    expect(renewed.id).toMatch(/^pss_/);
    expect(renewed.id).not.toBe('pss_first');
    for (let n = 0; n < MAX_FORMER_IDS + 2; n++) renewed = renewedSession(renewed);
    expect(renewed.formerIds).toHaveLength(MAX_FORMER_IDS);
    expect(signer.verify(signer.issue('ply_1', renewed), 'ply_1', now)).toEqual(renewed);
    const tooMany = { id: 'pss_abc', expires: now + 1000, formerIds: Array.from({ length: MAX_FORMER_IDS + 1 }, (_, i) => `pss_${i}`) };
    expect(signer.verify(signer.issue('ply_1', tooMany), 'ply_1', now)).toBeUndefined();
    expect(signer.verify(signer.issue('ply_1', { id: 'pss_abc', expires: now + 1000, formerIds: ['bad id'] }), 'ply_1', now)).toBeUndefined();
  });

  it('tags a password hash so that a new hash gives a new tag', () => {
    expect(passwordTag('scrypt$a')).not.toBe(passwordTag('scrypt$b'));
    expect(passwordTag('scrypt$a')).toBe(passwordTag('scrypt$a'));
  });
});

describe('invite tokens', () => {
  const ctx = { config: { signingSecret: secret } as Config };
  it('match only their own player, email and nonce', () => {
    const token = inviteToken(ctx, 'ply_1', 'a@b.test', 'nonce1');
    expect(inviteMatches(ctx, 'ply_1', 'a@b.test', 'nonce1', token)).toBe(true);
    expect(inviteMatches(ctx, 'ply_2', 'a@b.test', 'nonce1', token)).toBe(false);
    expect(inviteMatches(ctx, 'ply_1', 'c@b.test', 'nonce1', token)).toBe(false);
    expect(inviteMatches(ctx, 'ply_1', 'a@b.test', 'nonce2', token)).toBe(false);
    expect(inviteMatches(ctx, 'ply_1', 'a@b.test', 'nonce1', `${token}x`)).toBe(false);
  });
});

describe('player passwords', () => {
  it('hash with a fresh salt, verify the right password only, and refuse a hash of an unknown form', async () => {
    const [one, two] = await Promise.all([hashPassword('night-drive'), hashPassword('night-drive')]);
    expect(one).not.toBe(two);
    expect(await verifyPassword('night-drive', one)).toBe(true);
    expect(await verifyPassword('night-drive', two)).toBe(true);
    expect(await verifyPassword('night-drivE', one)).toBe(false);
    expect(await verifyPassword('night-drive', 'bcrypt$whatever')).toBe(false);
    expect(await verifyPassword('night-drive', 'scrypt$0$8$1$c2FsdA$aGFzaA')).toBe(false);
  });
});
