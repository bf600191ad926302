import { describe, expect, it } from 'vitest';
import { PlayerSessionSigner } from './player-session.ts';
import { UrlSigner } from '../signing/url-signer.ts';
import { checkSameOrigin } from './same-origin.ts';

const secret = Buffer.from('a-signing-secret-of-at-least-32-characters');

describe('player session cookies', () => {
  const signer = new PlayerSessionSigner(secret);
  const session = { playerId: 'ply_a', userId: 'usr_b', expires: 2_000 };
  const value = signer.issue(session);

  it('holds the user and the expiry, and verifies for its player until it expires', () => {
    expect(value.startsWith('usr_b.2000.')).toBe(true);
    expect(signer.verify(value, 'ply_a', 1_999)).toEqual(session);
    expect(signer.verify(value, 'ply_a', 2_000)).toBeUndefined();
  });

  it('refuses it on another player, with another user or a later expiry, under another secret, or mangled', () => {
    const [, , signature] = value.split('.');
    expect(signer.verify(value, 'ply_other', 1_000)).toBeUndefined();
    expect(signer.verify(`usr_c.2000.${signature}`, 'ply_a', 1_000)).toBeUndefined();
    expect(signer.verify(`usr_b.9999.${signature}`, 'ply_a', 1_000)).toBeUndefined();
    expect(new PlayerSessionSigner(Buffer.from('another-signing-secret-of-32-characters!')).verify(value, 'ply_a', 1_000)).toBeUndefined();
    for (const mangled of ['', 'usr_b', `${value}.x`, `usr_b.2e3.${signature}`, `usr b.2000.${signature}`, `usr_b.2000.${signature.slice(1)}`]) {
      expect(signer.verify(mangled, 'ply_a', 1_000), mangled).toBeUndefined();
    }
  });

  it('never accepts a URL signature as a session, though both come from the same secret', () => {
    const urlSignature = new UrlSigner(secret).sign({ method: 'GET', path: '/p/ply_a', expires: 2_000, bound: { userId: 'usr_b' } });
    expect(signer.verify(`usr_b.2000.${Buffer.from(urlSignature, 'hex').toString('base64url')}`, 'ply_a', 1_000)).toBeUndefined();
  });
});

describe('same-origin check of state-changing requests', () => {
  const origin = 'https://audio.example.org';
  it('lets Sec-Fetch-Site decide when the browser sends it', () => {
    expect(checkSameOrigin({ 'sec-fetch-site': 'same-origin' }, origin).allowed).toBe(true);
    for (const site of ['cross-site', 'same-site', 'none']) expect(checkSameOrigin({ 'sec-fetch-site': site, origin }, origin).allowed, site).toBe(false);
  });

  it('otherwise wants the Origin of PUBLIC_URL, and refuses a request with neither', () => {
    expect(checkSameOrigin({ origin }, origin).allowed).toBe(true);
    expect(checkSameOrigin({ origin: 'https://evil.example' }, origin)).toMatchObject({ allowed: false, reason: expect.stringContaining('https://evil.example') });
    expect(checkSameOrigin({ origin: 'null' }, origin).allowed).toBe(false);
    expect(checkSameOrigin({}, origin).allowed).toBe(false);
  });
});
