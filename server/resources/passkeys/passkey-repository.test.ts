/**
 * The ceremonies' challenges on each store, as several API processes share
 * them: one process stores a challenge, another takes it; of two takes at
 * once exactly one gets it; an expired one is not answered, and the next
 * challenge of its kind clears it away.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, useTestStore } from '../../testing/databases.ts';
import { openStore, type Store } from '../../repositories.ts';

const MINUTE = 60_000;

describe.each(backends)('passkey challenges on %s', (backend) => {
  const t = useTestStore(backend);
  // A second process's store over the same database.
  let other: Store;
  beforeAll(async () => {
    other = await openStore(t.database);
  });
  afterAll(async () => {
    await other?.close();
  });

  const stored = async () => Number((await t.store.db.query<{ n: number }>('SELECT COUNT(*) AS n FROM auth_challenges'))[0].n);

  it('is taken by another process, once, and only as the kind it was made for', async () => {
    const now = Date.now();
    const challenge = await t.store.passkeys.createChallenge('passkey-authentication', null, 'c2lnbi1pbg', now, 5 * MINUTE);
    expect(await other.passkeys.takeChallenge('passkey-registration', challenge.id, now)).toBeUndefined();
    expect(await other.passkeys.takeChallenge('passkey-authentication', challenge.id, now)).toEqual(challenge);
    expect(await t.store.passkeys.takeChallenge('passkey-authentication', challenge.id, now)).toBeUndefined();
  });

  it('goes to exactly one of two processes that take it at once', async () => {
    const now = Date.now();
    for (let round = 0; round < 10; round++) {
      const { id } = await t.store.passkeys.createChallenge('passkey-authentication', null, `round-${round}`, now, 5 * MINUTE);
      const taken = await Promise.all([t.store.passkeys.takeChallenge('passkey-authentication', id, now), other.passkeys.takeChallenge('passkey-authentication', id, now)]);
      expect(taken.filter(Boolean)).toHaveLength(1);
    }
  });

  it('is not answered once expired, and the next challenge of its kind clears the expired ones away', async () => {
    const now = Date.now();
    const old = await t.store.passkeys.createChallenge('passkey-registration', null, 'b2xk', now - 6 * MINUTE, 5 * MINUTE);
    const late = await t.store.passkeys.createChallenge('passkey-registration', null, 'bGF0ZQ', now - 5 * MINUTE, 5 * MINUTE);
    expect(await t.store.passkeys.takeChallenge('passkey-registration', late.id, now)).toBeUndefined();
    const before = await stored();
    await t.store.passkeys.createChallenge('passkey-registration', null, 'bmV3', now, 5 * MINUTE);
    // The old one is gone (cleared), and only the new one was added.
    expect(await stored()).toBe(before);
    expect(await t.store.passkeys.takeChallenge('passkey-registration', old.id, now)).toBeUndefined();
  });
});
