/** Single sign-on's SQL, the same on both engines. */
import { describe, expect, it } from 'vitest';
import { backends, useTestStore } from '../../testing/databases.ts';

describe.each(backends)('single sign-on repository on %s', (backend) => {
  const t = useTestStore(backend);

  it('gives a round trip back once, and none that expired', async () => {
    await t.store.sso.saveChallenge('state-hash-1', { nonce: 'n', codeVerifier: 'v', invite: 'inv' }, 1000);
    expect(await t.store.sso.takeChallenge('state-hash-1', 999)).toEqual({ nonce: 'n', codeVerifier: 'v', invite: 'inv' });
    expect(await t.store.sso.takeChallenge('state-hash-1', 999)).toBeUndefined();
    await t.store.sso.saveChallenge('state-hash-2', { nonce: 'n', codeVerifier: 'v' }, 1000);
    expect(await t.store.sso.takeChallenge('state-hash-2', 1000)).toBeUndefined();
    expect(await t.store.sso.takeChallenge('never-saved', 0)).toBeUndefined();
  });

  it('gives a round trip to only one of two processes asking at once', async () => {
    await t.store.sso.saveChallenge('state-hash-3', { nonce: 'n', codeVerifier: 'v' }, 1000);
    const taken = await Promise.all([t.store.sso.takeChallenge('state-hash-3', 1), t.store.sso.takeChallenge('state-hash-3', 1)]);
    expect(taken.filter(Boolean)).toHaveLength(1);
  });

  it('sweeps the round trips that were never finished, and only those', async () => {
    await t.store.sso.saveChallenge('old', { nonce: 'n', codeVerifier: 'v' }, 10);
    await t.store.sso.saveChallenge('fresh', { nonce: 'n', codeVerifier: 'v' }, 5000);
    expect(await t.store.sso.sweepChallenges(100)).toBe(1);
    expect(await t.store.sso.takeChallenge('fresh', 100)).toBeDefined();
  });

  it('links an identity to one account, once', async () => {
    const ada = await t.store.users.findOrCreate('ada@example.org', 1);
    const bob = await t.store.users.findOrCreate('bob@example.org', 1);
    expect(await t.store.sso.accountOf('https://id.example.org', 'ada')).toBeUndefined();
    expect(await t.store.sso.link('https://id.example.org', 'ada', ada.id, 5)).toBe(true);
    expect(await t.store.sso.link('https://id.example.org', 'ada', bob.id, 6)).toBe(false);
    expect(await t.store.sso.accountOf('https://id.example.org', 'ada')).toBe(ada.id);
    // The same subject at another provider is someone else.
    expect(await t.store.sso.accountOf('https://other.example.org', 'ada')).toBeUndefined();
    expect(await t.store.sso.identitiesOf(ada.id)).toEqual([{ issuer: 'https://id.example.org', subject: 'ada', timeCreated: 5 }]);
  });
});
