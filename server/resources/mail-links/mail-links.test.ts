/**
 * What is done by mail, over real HTTP on each store, with mail going out
 * through nodemailer to a real SMTP server on loopback (testing/smtp-sink.ts)
 * and the links read out of what it got: a password reset, an email
 * address's verification, a collaborator's invitation; and a server without
 * mail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';
import { linkTo, startSmtpSink, type SmtpSink } from '../../testing/smtp-sink.ts';
import { FAILURES_PER_ADDRESS } from '../../auth/attempt-limits.ts';
import { hashPassword } from '../../auth/passwords.ts';
import { runAdmin } from '../../admin/cli.ts';
import { MAILS_PER_HOUR, mailCapsOf, RESET_LINK_TTL_MS } from './mail-links-service.ts';

const PASSWORD = 'a long and unusual passphrase';
const NEW_PASSWORD = 'another quite unusual sentence';

describe.each(backends)('mail links on %s', (backend) => {
  const env: Record<string, string> = { MAIL_FROM: 'Audio Share <audio@example.org>', JOB_POLL_MS: '20', REGISTRATION: 'invite', TRUST_PROXY: 'loopback' };
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
  /** A request from the server's own page, as a browser sends it. */
  const ownPage = (method: string, body?: unknown, cookie?: string): RequestInit => ({
    method,
    headers: { Origin: origin(), 'Sec-Fetch-Site': 'same-origin', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...(cookie ? { Cookie: cookie } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const cookieOf = (response: Response) => response.headers.getSetCookie().find((line) => line.startsWith('as_session='))?.split(';')[0];
  let count = 0;
  const address = (what: string) => `${what}-${count++}-${backend}@example.com`;

  /** An account as sign-up makes it (a password, the address not verified), through the store. */
  async function account(email: string) {
    const user = await t.server.ctx.store.users.create({ email, name: 'Sam <b>Rivera</b>', passwordHash: await hashPassword(PASSWORD), emailVerified: false, isAdmin: false }, Date.now());
    return user!;
  }
  async function signIn(email: string, password = PASSWORD) {
    const response = await t.fetch('/auth/signin', ownPage('POST', { email, password }));
    return { status: response.status, cookie: cookieOf(response) };
  }
  const me = async (cookie: string | undefined) => (await t.fetch('/me', { headers: cookie ? { Cookie: cookie } : {} })).status;
  const mailJobs = async () => Number((await t.server.ctx.store.db.query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM jobs WHERE kind = 'send-mail'`))[0].n);

  it('says in the sign-in configuration that this server sends mail', async () => {
    expect(await (await t.fetch('/auth/config')).json()).toMatchObject({ mail: true });
  });

  it('resets a password through the mailed link: every session ends, the new password signs in, the link works once', async () => {
    const email = address('reset');
    const user = await account(email);
    const first = await signIn(email);
    const second = await signIn(email);
    expect([await me(first.cookie), await me(second.cookie)]).toEqual([200, 200]);

    const asked = await t.fetch('/auth/password-reset', ownPage('POST', { email: email.toUpperCase() }));
    expect(asked.status).toBe(202);
    expect(await asked.json()).toEqual({});
    const mail = await sink.nextTo(email);
    expect(mail.subject).toBe('Reset your Audio Share password');
    expect(mail.html).toContain('Sam &lt;b&gt;Rivera&lt;/b&gt;');
    const link = linkTo(mail, '/reset-password');
    expect(link.origin).toBe(origin());
    const token = link.searchParams.get('token')!;

    // A password the rules refuse leaves the link for another try.
    const weak = await t.fetch('/auth/password-reset/complete', ownPage('POST', { token, password: 'password1234' }));
    expect(weak.status).toBe(400);
    expect((await weak.json()).type).toBe('/problems/validation-error');

    const done = await t.fetch('/auth/password-reset/complete', ownPage('POST', { token, password: NEW_PASSWORD }));
    expect(done.status).toBe(200);
    expect([await me(first.cookie), await me(second.cookie)]).toEqual([401, 401]);
    expect((await signIn(email)).status).toBe(401);
    expect((await signIn(email, NEW_PASSWORD)).status).toBe(200);
    // The link was mailed to the address, so using it verifies it.
    expect((await t.server.ctx.store.users.get(user.id))?.emailVerified).toBe(true);
    expect((await t.server.ctx.store.securityEvents.listOf(user.id)).map((event) => event.kind)).toContain('password-reset');

    const again = await t.fetch('/auth/password-reset/complete', ownPage('POST', { token, password: 'yet another long sentence' }));
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ type: '/problems/link-invalid', detail: expect.stringContaining('used already') });
    expect((await signIn(email, NEW_PASSWORD)).status).toBe(200);
  });

  it('answers an unknown address exactly as a known one, and mails nothing for it', async () => {
    const known = address('known');
    await account(known);
    const unknown = address('nobody');
    const jobsBefore = await mailJobs();
    const forUnknown = await t.fetch('/auth/password-reset', ownPage('POST', { email: unknown }));
    const forKnown = await t.fetch('/auth/password-reset', ownPage('POST', { email: known }));
    expect([forUnknown.status, await forUnknown.text()]).toEqual([forKnown.status, await forKnown.text()]);
    await sink.nextTo(known);
    // The known address's mail went out after the unknown one was looked up (queued in order, one process): one mail in all.
    expect(await mailJobs()).toBe(jobsBefore + 1);
    expect(sink.received.some((mail) => mail.to.includes(unknown))).toBe(false);
  });

  it('verifies an email address through the mailed link, and the players shared with it open to the account then', async () => {
    const email = address('verify');
    const user = await account(email);
    const owner = await t.as(address('owner'));
    const { data: player } = await owner.api.POST('/players', { body: { name: 'For Sam', public: false, collaborators: [{ email, role: 'viewer' }] } });
    // The invitation mail to the address (from the player's creation) is not the verification one: take it out of the way.
    expect((await sink.nextTo(email)).text).toContain('shared the player “For Sam” with you');
    const { cookie } = await signIn(email);
    const playerOf = async () => (await t.fetch(`/players/${player!.id}`, { headers: { Cookie: cookie! } })).status;
    expect(await playerOf()).toBe(404);

    const sent = await t.fetch('/me/email-verification', ownPage('POST', undefined, cookie));
    expect(sent.status).toBe(202);
    const mail = await sink.nextTo(email);
    expect(mail.subject).toBe('Confirm your email address for Audio Share');
    const token = linkTo(mail, '/verify-email').searchParams.get('token')!;
    // Opened on another device: no session needed.
    const verified = await t.fetch('/auth/email-verification', ownPage('POST', { token }));
    expect(verified.status).toBe(200);
    expect((await t.server.ctx.store.users.get(user.id))?.emailVerified).toBe(true);
    expect(await playerOf()).toBe(200);
    expect((await t.server.ctx.store.securityEvents.listOf(user.id)).map((event) => event.kind)).toContain('email-verified');

    const twice = await t.fetch('/auth/email-verification', ownPage('POST', { token }));
    expect((await twice.json()).type).toBe('/problems/link-invalid');
    const already = await t.fetch('/me/email-verification', ownPage('POST', undefined, cookie));
    expect(already.status).toBe(409);
  });

  it('sends at most three verification mails an hour', async () => {
    const email = address('often');
    await account(email);
    const { cookie } = await signIn(email);
    for (let i = 0; i < 3; i++) expect((await t.fetch('/me/email-verification', ownPage('POST', undefined, cookie))).status).toBe(202);
    const fourth = await t.fetch('/me/email-verification', ownPage('POST', undefined, cookie));
    expect(fourth.status).toBe(429);
    expect(Number(fourth.headers.get('retry-after'))).toBeGreaterThan(3500);
    expect(Number(fourth.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
    expect(await fourth.json()).toMatchObject({ type: '/problems/rate-limited', detail: expect.stringContaining('look for the last one') });
  });

  it('sends at most three reset mails an hour to one account, however many requests come at once', async () => {
    const email = address('flooded');
    const user = await account(email);
    const asked = await Promise.all(Array.from({ length: 11 }, () => t.fetch('/auth/password-reset', ownPage('POST', { email }))));
    expect(asked.map((response) => response.status)).toEqual(Array(11).fill(202));
    // Each request took its point before it was answered: the three mails are decided, and more were refused.
    expect((await mailCapsOf(t.server.ctx.store.db).reset.get(email))?.consumedPoints).toBeGreaterThan(MAILS_PER_HOUR);
    for (let i = 0; i < MAILS_PER_HOUR; i++) await sink.nextTo(email);
    // The links made are the mails sent: three, and no fourth on its way.
    const links = await t.server.ctx.store.db.query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM one_time_links WHERE kind = 'reset' AND user_id = $1`, [user.id]);
    expect(Number(links[0].n)).toBe(MAILS_PER_HOUR);
    expect(sink.received.filter((mail) => mail.to.includes(email))).toHaveLength(MAILS_PER_HOUR);
  });

  it("refuses a verification link once the account's address has changed", async () => {
    const email = address('moved');
    const user = await account(email);
    const { cookie } = await signIn(email);
    await t.fetch('/me/email-verification', ownPage('POST', undefined, cookie));
    const token = linkTo(await sink.nextTo(email), '/verify-email').searchParams.get('token')!;
    await t.server.ctx.store.db.execute('UPDATE users SET email = $2 WHERE id = $1', [user.id, address('elsewhere')]);
    const refused = await t.fetch('/auth/email-verification', ownPage('POST', { token }));
    expect((await refused.json()).type).toBe('/problems/link-invalid');
    expect((await t.server.ctx.store.users.get(user.id))?.emailVerified).toBe(false);
  });

  it("mails a collaborator the invitation to sign up; the account made with it is verified and opens the player", async () => {
    const owner = await t.as(address('band'));
    await t.server.ctx.store.db.execute(`UPDATE users SET name = 'The Band' WHERE email = $1`, [`band-${count - 1}-${backend}@example.com`]);
    const guest = address('guest');
    const { data: player } = await owner.api.POST('/players', { body: { name: 'Mix <3>', public: false, collaborators: [{ email: guest, role: 'editor' }] } });
    const mail = await sink.nextTo(guest);
    expect(mail.subject).toBe('An invitation to a player on Audio Share');
    expect(mail.text).toContain('The Band shared the player “Mix <3>” with you');
    expect(mail.html).toContain('Mix &lt;3&gt;');
    const link = linkTo(mail, '/signup');
    const invite = link.searchParams.get('invite')!;
    expect(invite.startsWith(`${player!.id}.`)).toBe(true);

    const signedUp = await t.fetch('/auth/signup', ownPage('POST', { name: 'Guest', email: guest, password: PASSWORD, invite }));
    expect(signedUp.status).toBe(200);
    expect(await signedUp.json()).toMatchObject({ email: guest, emailVerified: true });
    expect((await t.fetch(`/players/${player!.id}`, { headers: { Cookie: cookieOf(signedUp)! } })).status).toBe(200);

    // A renewed link is mailed too, and the old one stops working.
    const renewed = await owner.api.POST('/players/{playerid}/collaborators/{email}/invite', { params: { path: { playerid: player!.id, email: guest } } });
    expect(renewed.response.status).toBe(200);
    const second = linkTo(await sink.nextTo(guest), '/signup').searchParams.get('invite')!;
    expect(second).not.toBe(invite);
  });

  /** A 429 of the invitation caps: a problem that says what to do, with Retry-After. */
  function expectCapped(response: Response, body: unknown, says: string) {
    expect(response.status).toBe(429);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(body).toMatchObject({ type: '/problems/rate-limited', detail: expect.stringContaining(says) });
    expect((body as { detail: string }).detail).toContain('invite link');
  }

  it('mails one address at most three invitations an hour, however many renewals come at once; a refused renewal keeps the link', async () => {
    const owner = await t.as(address('sharer'));
    const guest = address('invited');
    const { data: player } = await owner.api.POST('/players', { body: { name: 'Capped', public: false, collaborators: [{ email: guest, role: 'viewer' }] } });
    await sink.nextTo(guest);
    const renew = () => owner.api.POST('/players/{playerid}/collaborators/{email}/invite', { params: { path: { playerid: player!.id, email: guest } } });
    const renewals = await Promise.all(Array.from({ length: 6 }, renew));
    const statuses = renewals.map(({ response }) => response.status).sort();
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429]);
    for (const { response, error } of renewals.filter(({ response }) => response.status === 429)) expectCapped(response, error, 'invitation mails in the last hour');
    await sink.nextTo(guest);
    await sink.nextTo(guest);

    const linkOf = async () => (await owner.api.GET('/players/{playerid}/collaborators', { params: { path: { playerid: player!.id } } })).data![0].inviteUrl;
    const before = await linkOf();
    expect((await renew()).response.status).toBe(429);
    expect(await linkOf()).toBe(before);
    // Every mail to the address was taken, and the refusals sent none.
    expect(sink.received.filter((mail) => mail.to.includes(guest))).toHaveLength(3);
  });

  it('lets one account send at most 20 invitation mails an hour: then 429, a role change still works, and a player that would mail more is not made', async () => {
    const ownerEmail = address('crowd');
    const owner = await t.as(ownerEmail);
    const { data: player } = await owner.api.POST('/players', { body: { name: 'Crowd', public: false } });
    const playerid = player!.id;
    const fans = Array.from({ length: 25 }, (_, index) => address(`fan${index}`));
    const invite = (email: string, role: 'viewer' | 'editor' = 'viewer') => owner.api.PUT('/players/{playerid}/collaborators/{email}', { params: { path: { playerid, email } }, body: { role } });
    const invited = await Promise.all(fans.map((email) => invite(email)));
    const accepted = fans.filter((_, index) => invited[index].response.status === 200);
    expect(accepted).toHaveLength(20);
    for (const { response, error } of invited.filter(({ response }) => response.status !== 200)) expectCapped(response, error, 'At most 20 invitation mails an hour from one account');
    for (const email of accepted) await sink.nextTo(email);

    // A change of role mails nothing, so no cap stops it.
    expect((await invite(accepted[0], 'editor')).response.status).toBe(200);
    const players = async () => ((await owner.api.GET('/players')).data ?? []).length;
    const count = await players();
    const more = await owner.api.POST('/players', { body: { name: 'More', public: false, collaborators: [{ email: address('late'), role: 'viewer' }] } });
    expectCapped(more.response, more.error, 'At most 20 invitation mails an hour from one account');
    expect(await players()).toBe(count);
    // A player without collaborators mails nobody, and is made.
    expect((await owner.api.POST('/players', { body: { name: 'Quiet' } })).response.status).toBe(200);
  });

  it('prints a reset link from the admin CLI that works as a mailed one does', async () => {
    const email = address('cli');
    await account(email);
    const cliEnv = { DATA_DIR: t.server.ctx.config.dataDir, DATABASE_URL: t.server.ctx.config.databaseUrl ?? '', PUBLIC_URL: t.server.ctx.config.publicUrl };
    const printed = await runAdmin(['user', 'reset-link', '--email', email], cliEnv);
    expect(printed).toMatchObject({ code: 0, stderr: expect.stringContaining('works once') });
    const link = new URL(printed.stdout.trim());
    expect(link.pathname).toBe('/reset-password');
    const done = await t.fetch('/auth/password-reset/complete', ownPage('POST', { token: link.searchParams.get('token'), password: NEW_PASSWORD }));
    expect(done.status).toBe(200);
    expect((await signIn(email, NEW_PASSWORD)).status).toBe(200);
    expect(await runAdmin(['user', 'reset-link', '--email', address('nobody')], cliEnv)).toMatchObject({ code: 1, stderr: expect.stringContaining('No account') });
  });

  it('limits the guesses of reset tokens by address, as failed sign-ins are', async () => {
    // An address of its own (the server believes loopback's X-Forwarded-For), so that the other tests keep theirs.
    const guess = () =>
      t.fetch('/auth/password-reset/complete', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': '203.0.113.7' }, body: JSON.stringify({ token: 'guessed', password: NEW_PASSWORD }) });
    const answers: number[] = [];
    for (let i = 0; i < FAILURES_PER_ADDRESS; i++) answers.push((await guess()).status);
    expect(new Set(answers)).toEqual(new Set([400]));
    const refused = await guess();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
  });
  // Last: it moves the server's clock an hour on, past the links the admin CLI makes by the system clock.
  it('refuses a reset link after its hour', async () => {
    const email = address('late');
    await account(email);
    await t.fetch('/auth/password-reset', ownPage('POST', { email }));
    const token = linkTo(await sink.nextTo(email), '/reset-password').searchParams.get('token')!;
    t.server.clock.advance(RESET_LINK_TTL_MS + 1000);
    const late = await t.fetch('/auth/password-reset/complete', ownPage('POST', { token, password: NEW_PASSWORD }));
    expect(late.status).toBe(400);
    expect((await late.json()).type).toBe('/problems/link-invalid');
  });
});

describe.each(backends)('a server without mail, on %s', (backend) => {
  const t = useTestServer(backend);

  it('says so in the sign-in configuration, and refuses to mail links (409), the same for every address', async () => {
    expect(await (await t.fetch('/auth/config')).json()).toMatchObject({ mail: false });
    const known = `known-${backend}@example.com`;
    await t.server.ctx.store.users.create({ email: known, name: 'K', passwordHash: await hashPassword(PASSWORD), emailVerified: false, isAdmin: false }, Date.now());
    const answers = [];
    for (const email of [known, `unknown-${backend}@example.com`]) {
      const response = await t.fetch('/auth/password-reset', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email }) });
      answers.push([response.status, (await response.json()).type]);
    }
    expect(answers).toEqual([
      [409, '/problems/mail-not-configured'],
      [409, '/problems/mail-not-configured'],
    ]);
    const { token } = await t.as(known);
    const verification = await t.fetch('/me/email-verification', { method: 'POST', token });
    expect(verification.status).toBe(409);
    expect((await verification.json()).type).toBe('/problems/mail-not-configured');
  });
});
