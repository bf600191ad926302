/**
 * The limits on guessing hold under concurrency, over real HTTP on each
 * store: every operation that checks a secret (a password, a passkey's
 * signature, a reset, verification or setup token) is sent 40 wrong answers
 * at once, and at most the limit's number of them is checked; the rest are
 * refused (429, a problem with Retry-After) before any secret is looked at.
 * Before the attempt took its point ahead of the check, all 40 were checked.
 */
import { describe, expect, it } from 'vitest';
import { backends } from '../testing/databases.ts';
import { useTestServer } from '../testing/harness.ts';
import { SoftAuthenticator } from '../testing/webauthn-authenticator.ts';
import { hashPassword } from './passwords.ts';
import { FAILURES_PER_ACCOUNT, FAILURES_PER_ADDRESS } from './attempt-limits.ts';

const PASSWORD = 'a long and unusual passphrase';
const AT_ONCE = 40;

type Json = Record<string, unknown>;

describe.each(backends)('attempt limits under concurrency on %s', (backend) => {
  // Loopback's X-Forwarded-For is believed, so that each case has an address of its own.
  const t = useTestServer(backend, { TRUST_PROXY: 'loopback' });
  let made = 0;
  let addresses = 0;
  const origin = () => new URL(t.server.apiUrl).origin;
  const freshAddress = () => `198.51.100.${++addresses}`;

  /** A request from the server's own page, from `address`, with the session cookie when one is given. */
  const call = (path: string, { method = 'POST', body, cookie, address }: { method?: string; body?: unknown; cookie?: string; address: string }) =>
    t.fetch(path, {
      method,
      headers: {
        Origin: origin(),
        'Sec-Fetch-Site': 'same-origin',
        'X-Forwarded-For': address,
        ...(cookie ? { Cookie: cookie } : {}),
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  /** An account with the password, and a session of it made through the store (sign-in has its own tests). */
  async function account() {
    const email = `limits-${made++}-${backend}@example.com`;
    const user = await t.server.ctx.store.users.create({ email, name: 'Sam', passwordHash: await hashPassword(PASSWORD), emailVerified: false, isAdmin: false }, Date.now());
    const { secret } = await t.server.ctx.store.sessions.create(user!.id, 'password', { userAgent: null, address: null }, Date.now());
    return { email, userId: user!.id, cookie: `as_session=${secret}` };
  }

  /** Sends `AT_ONCE` requests at once; answers their statuses, and checks that every refusal is a 429 problem with Retry-After. */
  async function atOnce(send: (index: number) => Promise<Response>): Promise<number[]> {
    const responses = await Promise.all(Array.from({ length: AT_ONCE }, (_, index) => send(index)));
    for (const response of responses) {
      if (response.status !== 429) continue;
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await response.json()).toMatchObject({ type: '/problems/rate-limited', detail: expect.stringMatching(/Too many failed attempts .* Try again in/) });
    }
    return responses.map((response) => response.status);
  }

  /** What the statuses show: how many were checked (answered anything but 429) and refused. */
  const tally = (statuses: number[]) => ({ checked: statuses.filter((status) => status !== 429).length, refused: statuses.filter((status) => status === 429).length });

  interface Case {
    name: string;
    /** The limit that stops it: the account's (10) or, when no account is named, the address's (30). */
    limit: number;
    /** The status of one wrong answer. */
    wrong: number;
    /** Prepares one account (or none) and answers how to send wrong answer `index`, and the right one when there is one. */
    setUp(): Promise<{
      send: (index: number, address: string) => Promise<Response>;
      right?: (address: string) => Promise<Response>;
      /** How many failures the server recorded, when it records them. */
      failures?: () => Promise<number>;
      /** What else must hold afterwards. */
      after?: () => Promise<void>;
    }>;
  }

  const signInFailures = (userId: string, detail: string) => async () =>
    (await t.server.ctx.store.securityEvents.listOf(userId)).filter((event) => event.kind === 'signin-failed' && event.detail === detail).length;

  const cases: Case[] = [
    {
      name: 'sign-in with a password',
      limit: FAILURES_PER_ACCOUNT,
      wrong: 401,
      async setUp() {
        const { email, userId } = await account();
        return {
          send: (index, address) => call('/auth/signin', { body: { email, password: `wrong guess number ${index}` }, address }),
          right: (address) => call('/auth/signin', { body: { email, password: PASSWORD }, address }),
          failures: signInFailures(userId, 'password'),
        };
      },
    },
    {
      name: 'a password change (the current password)',
      limit: FAILURES_PER_ACCOUNT,
      wrong: 400,
      async setUp() {
        const { cookie } = await account();
        return {
          send: (index, address) => call('/me/password', { body: { currentPassword: `wrong guess number ${index}`, newPassword: 'another long passphrase' }, cookie, address }),
        };
      },
    },
    {
      name: "an account's deletion (its password)",
      limit: FAILURES_PER_ACCOUNT,
      wrong: 403,
      async setUp() {
        const { cookie, userId } = await account();
        return {
          send: (index, address) => call('/me', { method: 'DELETE', body: { password: `wrong guess number ${index}` }, cookie, address }),
          after: async () => expect(await t.server.ctx.store.users.get(userId)).toBeDefined(),
        };
      },
    },
    {
      name: 'a passkey sign-in (its signature)',
      limit: FAILURES_PER_ACCOUNT,
      wrong: 401,
      async setUp() {
        const { cookie, userId } = await account();
        const authenticator = new SoftAuthenticator(origin());
        const registration = (await (await call('/me/passkeys/options', { cookie, address: freshAddress() })).json()) as { challengeId: string; options: Json };
        const added = await call('/me/passkeys', { body: { challengeId: registration.challengeId, name: 'Laptop', response: authenticator.create(registration.options) }, cookie, address: freshAddress() });
        expect(added.status).toBe(200);
        const challenges = await Promise.all(
          Array.from({ length: AT_ONCE + 1 }, async () => (await (await call('/auth/passkeys/options', { address: freshAddress() })).json()) as { challengeId: string; options: Json }),
        );
        return {
          send: (index, address) => {
            const { challengeId, options } = challenges[index];
            const answer = authenticator.get(options) as { response: Json };
            answer.response.signature = Buffer.alloc(70, index + 1).toString('base64url');
            return call('/auth/passkeys/signin', { body: { challengeId, response: answer }, address });
          },
          right: (address) => {
            const { challengeId, options } = challenges[AT_ONCE];
            return call('/auth/passkeys/signin', { body: { challengeId, response: authenticator.get(options) }, address });
          },
          failures: signInFailures(userId, 'passkey'),
        };
      },
    },
    {
      name: 'a password reset (its token)',
      limit: FAILURES_PER_ADDRESS,
      wrong: 400,
      async setUp() {
        return { send: (index, address) => call('/auth/password-reset/complete', { body: { token: `guessed-${index}`, password: 'another quite unusual sentence' }, address }) };
      },
    },
    {
      name: "an email address's verification (its token)",
      limit: FAILURES_PER_ADDRESS,
      wrong: 400,
      async setUp() {
        return { send: (index, address) => call('/auth/email-verification', { body: { token: `guessed-${index}` }, address }) };
      },
    },
    {
      name: 'the first account (the setup token)',
      limit: FAILURES_PER_ADDRESS,
      wrong: 403,
      async setUp() {
        return {
          send: (index, address) => call('/auth/setup', { body: { token: `guessed-${index}`, name: 'Sam', email: `setup-${index}@example.com`, password: PASSWORD }, address }),
        };
      },
    },
  ];

  it.each(cases)('$name: of 40 wrong answers sent at once, at most the limit are checked, the rest refused', async ({ limit, wrong, setUp }) => {
    const { send, right, failures, after } = await setUp();
    const address = freshAddress();
    const statuses = await atOnce((index) => send(index, address));
    const { checked, refused } = tally(statuses);
    expect(checked).toBeLessThanOrEqual(limit);
    // Every point was taken by a wrong answer and none given back, so exactly the limit were checked.
    expect(checked).toBe(limit);
    expect(refused).toBe(AT_ONCE - limit);
    expect(new Set(statuses.filter((status) => status !== 429))).toEqual(new Set([wrong]));
    if (failures) expect(await failures()).toBeLessThanOrEqual(limit);
    await after?.();
    // The right answer is refused too, from this address or (for an account's limit) any other: the secret is not
    // checked until the window ends.
    if (right) expect((await right(limit === FAILURES_PER_ACCOUNT ? freshAddress() : address)).status).toBe(429);
  });

  it('a right password gives its point back and clears the account: sign-ins that succeed are never counted', async () => {
    const { email } = await account();
    const address = freshAddress();
    const signIn = (password: string) => call('/auth/signin', { body: { email, password }, address });
    for (let round = 0; round < 3; round++) {
      // One short of the limit, then the right one: the count starts again.
      const wrongs = await Promise.all(Array.from({ length: FAILURES_PER_ACCOUNT - 1 }, (_, index) => signIn(`wrong guess ${round}-${index}`)));
      expect(wrongs.map((response) => response.status)).toEqual(Array(FAILURES_PER_ACCOUNT - 1).fill(401));
      expect((await signIn(PASSWORD)).status).toBe(200);
    }
    // Many right ones in turn never use the address's points up either (each gives its point back).
    for (let i = 0; i < FAILURES_PER_ADDRESS; i++) expect((await signIn(PASSWORD)).status).toBe(200);
  });

  it("an account's lock does not use up the address's points: a refused attempt gives back what it took", async () => {
    const locked = await account();
    const other = await account();
    const address = freshAddress();
    await atOnce((index) => call('/auth/signin', { body: { email: locked.email, password: `wrong guess ${index}` }, address }));
    // 10 failures counted against the address, and the 30 refusals none: 20 more failures may come from it.
    const next = await Promise.all(
      Array.from({ length: FAILURES_PER_ADDRESS - FAILURES_PER_ACCOUNT }, (_, index) => call('/auth/signin', { body: { email: `nobody-${index}@example.com`, password: 'a wrong guess' }, address })),
    );
    expect(next.map((response) => response.status)).toEqual(Array(FAILURES_PER_ADDRESS - FAILURES_PER_ACCOUNT).fill(401));
    const spent = await call('/auth/signin', { body: { email: other.email, password: PASSWORD }, address });
    expect(spent.status).toBe(429);
    expect((await spent.json()).detail).toContain('from your address');
  });
});
