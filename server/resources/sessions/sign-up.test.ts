/**
 * Sign-up on a server with open registration that sends mail, over real
 * HTTP on each store, the mail going to a real SMTP server on loopback: the
 * answer is the same for an address that has an account and one that has
 * none, after the same work, and the difference goes by mail to the address
 * itself; every sign-up counts against the address's attempts; an
 * invitation for a taken address is a 409 that leaves the invitation whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';
import { linkTo, startSmtpSink, type SmtpSink } from '../../testing/smtp-sink.ts';
import { hashPassword } from '../../auth/passwords.ts';
import { FAILURES_PER_ADDRESS } from '../../auth/attempt-limits.ts';
import { SIGN_UP_MAILS_PER_HOUR } from './sign-up-service.ts';

const PASSWORD = 'a long and unusual passphrase';
const THEIRS = 'the owner of this one chose another';

describe.each(backends)('sign-up by mail on %s', (backend) => {
  const env: Record<string, string> = { MAIL_FROM: 'Audio Share <audio@example.org>', JOB_POLL_MS: '20', REGISTRATION: 'open', TRUST_PROXY: 'loopback' };
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await startSmtpSink();
    env.SMTP_URL = sink.url;
  });
  const t = useTestServer(backend, env);
  afterAll(async () => {
    await sink.close();
  });

  const origin = () => new URL(t.server.apiUrl).origin;
  let count = 0;
  const address = (what: string) => `${what}-${count++}-${backend}@example.com`;
  let addresses = 0;
  /** Each test signs up from an address of its own, so that one's attempts do not use up another's. */
  const freshClient = () => `192.0.2.${++addresses}`;
  const cookieOf = (response: Response) => response.headers.getSetCookie().find((line) => line.startsWith('as_session='))?.split(';')[0];

  const signUp = (body: Record<string, string>, client: string) =>
    t.fetch('/auth/signup', {
      method: 'POST',
      headers: { Origin: origin(), 'Sec-Fetch-Site': 'same-origin', 'Content-Type': 'application/json', 'X-Forwarded-For': client },
      body: JSON.stringify(body),
    });
  const signIn = (email: string, password: string, client: string) =>
    t.fetch('/auth/signin', {
      method: 'POST',
      headers: { Origin: origin(), 'Sec-Fetch-Site': 'same-origin', 'Content-Type': 'application/json', 'X-Forwarded-For': client },
      body: JSON.stringify({ email, password }),
    });

  async function account(email: string) {
    return (await t.server.ctx.store.users.create({ email, name: 'Sam <b>Rivera</b>', passwordHash: await hashPassword(THEIRS), emailVerified: true, isAdmin: false }, Date.now()))!;
  }

  it('answers a taken address exactly as a free one; the owner is told, and the free address gets the link that makes the account', async () => {
    const client = freshClient();
    const taken = address('taken');
    const owner = await account(taken);
    const free = address('free');
    const forTaken = await signUp({ name: 'Mallory', email: taken.toUpperCase(), password: PASSWORD }, client);
    const forFree = await signUp({ name: 'Alex Kim', email: free, password: PASSWORD }, client);
    expect(forTaken.status).toBe(202);
    expect(forFree.status).toBe(202);
    const [takenBody, freeBody] = [await forTaken.json(), await forFree.json()];
    expect(Object.keys(takenBody)).toEqual(Object.keys(freeBody));
    expect(takenBody).toEqual({ email: taken });
    expect(freeBody).toEqual({ email: free });
    // Neither signs in: no cookie either way.
    expect([cookieOf(forTaken), cookieOf(forFree)]).toEqual([undefined, undefined]);

    const told = await sink.nextTo(taken);
    expect(told.subject).toBe('Someone tried to sign up for Audio Share with your address');
    expect(told.html).toContain('Sam &lt;b&gt;Rivera&lt;/b&gt;');
    expect(linkTo(told, '/signin').origin).toBe(origin());
    // The owner's account is as it was: their password still signs in, the one given at sign-up does not.
    expect((await signIn(taken, PASSWORD, freshClient())).status).toBe(401);
    expect((await signIn(taken, THEIRS, freshClient())).status).toBe(200);
    expect((await t.server.ctx.store.users.get(owner.id))?.name).toBe('Sam <b>Rivera</b>');

    // No account for the free address until its link is opened: signing in with the password given fails like any other.
    expect(await t.server.ctx.store.users.findByEmail(free)).toBeUndefined();
    const finish = await sink.nextTo(free);
    expect(finish.subject).toBe('Finish signing up for Audio Share');
    const invite = linkTo(finish, '/signup').searchParams.get('invite')!;
    // The link is for that address only.
    const elsewhere = await signUp({ name: 'Alex Kim', email: address('other'), password: PASSWORD, invite }, client);
    expect(elsewhere.status).toBe(403);
    const made = await signUp({ name: 'Alex Kim', email: free, password: PASSWORD, invite }, client);
    expect(made.status).toBe(200);
    expect(await made.json()).toMatchObject({ email: free, name: 'Alex Kim', emailVerified: true });
    expect(cookieOf(made)).toBeDefined();
    const again = await signUp({ name: 'Alex Kim', email: free, password: PASSWORD, invite }, client);
    expect(again.status).toBe(403);
  });

  it('counts every sign-up against the address, taken or free: of 40 sent at once, 30 are hashed, the rest refused', async () => {
    const client = freshClient();
    const taken = address('taken-many');
    await account(taken);
    const answers = await Promise.all(Array.from({ length: 40 }, (_, index) => signUp({ name: 'Sam', email: index % 2 ? taken : address('many'), password: PASSWORD }, client)));
    const statuses = answers.map((response) => response.status);
    expect(statuses.filter((status) => status === 202)).toHaveLength(FAILURES_PER_ADDRESS);
    expect(statuses.filter((status) => status === 429)).toHaveLength(40 - FAILURES_PER_ADDRESS);
    const refused = answers.find((response) => response.status === 429)!;
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await refused.json()).detail).toContain('from your address');
  });

  it('mails one address at most three times an hour, however many sign-ups name it', async () => {
    const client = freshClient();
    const free = address('flood');
    const answers = await Promise.all(Array.from({ length: 6 }, () => signUp({ name: 'Sam', email: free, password: PASSWORD }, client)));
    expect(answers.map((response) => response.status)).toEqual(Array(6).fill(202));
    // Each took its mail's point before it was answered: three links are on their way, and no more.
    for (let i = 0; i < SIGN_UP_MAILS_PER_HOUR; i++) await sink.nextTo(free);
    const links = await t.server.ctx.store.db.query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM one_time_links WHERE kind = 'invitation' AND email = $1`, [free]);
    expect(Number(links[0].n)).toBe(SIGN_UP_MAILS_PER_HOUR);
  });

  it("an invitation for an address that has an account is a 409, and the invitation is not used up by it", async () => {
    const client = freshClient();
    const taken = address('invited-taken');
    await account(taken);
    const link = await t.server.ctx.store.oneTimeLinks.create('invitation', { email: taken, data: { admin: false }, ttlMs: 60_000 }, t.server.clock.now());
    const refused = await signUp({ name: 'Sam', email: taken, password: PASSWORD, invite: link.secret }, client);
    expect(refused.status).toBe(409);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await refused.json()).detail).toContain('Sign in instead');
    expect(await t.server.ctx.store.oneTimeLinks.peek('invitation', link.secret, t.server.clock.now())).toBeDefined();
  });

  it('refuses bad input with a problem, never a 500', async () => {
    const client = freshClient();
    for (const body of [{ name: 'Sam', email: 'not an address', password: PASSWORD }, { name: 'Sam', email: address('weak'), password: 'password1234' }, { name: 'Sam', email: address('nul'), password: `${PASSWORD}\u0000` }]) {
      const response = await signUp(body, client);
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
  });
});
