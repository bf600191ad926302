/**
 * The administration of accounts through the API, on each store:
 * administrators only; disabling ends sessions; the server keeps an
 * administrator; an account's own quota overrides the server's;
 * invitations are one-time links kept only as hashes.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { json, useTestServer } from '../../testing/harness.ts';
import { newId } from '../../lib/ids.ts';
import { INVITATION_MS } from './admin-service.ts';
import { signIn } from '../../testing/sessions.ts';
import { afterAll, beforeAll } from 'vitest';
import { linkTo, startSmtpSink, type SmtpSink } from '../../testing/smtp-sink.ts';

describe.each(backends)('administration on %s', (backend) => {
  const t = useTestServer(backend, { STORAGE_QUOTA_BYTES: '1000' });

  /** A client of an account made an administrator in the store, as the setup page or the admin CLI would. */
  async function administrator(email: string) {
    const client = await t.as(email);
    await t.server.ctx.store.db.execute('UPDATE users SET is_admin = 1 WHERE email = $1', [email]);
    return client;
  }
  const idOf = async (email: string) => (await t.server.ctx.store.users.findByEmail(email))!.id;

  it('refuses everyone but administrators, with 403, and changes nothing', async () => {
    const { token } = await t.as('plain@example.com');
    const target = await idOf('plain@example.com');
    for (const [path, init] of [
      ['/admin/users', {}],
      [`/admin/users/${target}`, json({ admin: true })],
      ['/admin/invitations', json({ email: 'friend@example.com' })],
    ] as const) {
      const response = await t.fetch(path, { ...init, token });
      expect(response.status, path).toBe(403);
      expect(await response.json()).toMatchObject({ type: '/problems/forbidden', detail: expect.stringContaining('Only administrators') });
    }
    expect((await t.server.ctx.store.userAdmin.get(target))!.admin).toBe(false);
    // A disabled administrator is no administrator.
    const { token: disabledAdmin } = await administrator('disabled-admin@example.com');
    await t.server.ctx.store.db.execute("UPDATE users SET disabled = 1 WHERE email = 'disabled-admin@example.com'");
    expect((await t.fetch('/admin/users', { token: disabledAdmin })).status).toBe(401);
  });

  it("takes an administrator's token with the admin scope to list, change and invite, and refuses account:read and account:write (insufficient-scope naming admin)", async () => {
    await administrator('scoped-admin@example.com');
    const adminId = await idOf('scoped-admin@example.com');
    const mint = async (scopes: string[]) => (await t.server.ctx.store.tokens.create(adminId, 'scoped', Date.now(), { scopes })).secret;
    // Issue 28: account:write was server administration; it is the person's own account now, and nothing but admin administers.
    const account = await mint(['account:read', 'account:write']);
    const admin = await mint(['admin']);
    for (const [path, init] of [['/admin/users', {}], [`/admin/users/${adminId}`, json({ storageQuota: null })], ['/admin/invitations', json({ email: 'refused-invite@example.com', admin: true })]] as const) {
      const refused = await t.fetch(path, { ...init, token: account });
      expect(refused.status, path).toBe(403);
      expect(await refused.json()).toMatchObject({ type: '/problems/insufficient-scope', scope: 'admin' });
    }
    expect((await t.fetch('/admin/users', { token: admin })).status).toBe(200);
    expect((await t.fetch(`/admin/users/${adminId}`, { ...json({ storageQuota: null }), token: admin })).status).toBe(200);
    expect((await t.fetch('/admin/invitations', { ...json({ email: 'scoped-invite@example.com' }), token: admin })).status).toBe(200);
    // The admin scope is no administrator's rights: an account that is not one is refused by the policy (403 forbidden).
    const { id: someoneId } = await t.server.ctx.store.users.findOrCreate('not-an-admin@example.com', Date.now());
    const someone = (await t.server.ctx.store.tokens.create(someoneId, 'scoped', Date.now(), { scopes: ['admin'] })).secret;
    const notAdmin = await t.fetch('/admin/users', { token: someone });
    expect(notAdmin.status).toBe(403);
    expect(await notAdmin.json()).toMatchObject({ type: '/problems/forbidden' });
  });

  it('lists the accounts oldest first, with their flags, quota and the bytes they use', async () => {
    const { api } = await administrator('lister@example.com');
    const { api: user } = await t.as('uses-room@example.com');
    const { data: project } = await user.POST('/projects', { body: { name: 'Room' } });
    await user.uploadFile(project!.id, { name: 'a.bin', mimeType: 'application/octet-stream' }, new Uint8Array(250));
    const { data, error } = await api.GET('/admin/users');
    expect(error).toBeUndefined();
    expect(data!.find((item) => item.email === 'uses-room@example.com')).toEqual({
      id: await idOf('uses-room@example.com'),
      object: 'user',
      email: 'uses-room@example.com',
      admin: false,
      disabled: false,
      // Made by the operator's hand (findOrCreate, as the admin CLI does): its address counts as verified.
      emailVerified: true,
      storageQuota: null,
      storageUsed: 250,
      timeCreated: expect.any(Number),
    });
    expect(data!.find((item) => item.email === 'lister@example.com')).toMatchObject({ admin: true });
    const times = data!.map((item) => item.timeCreated);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const page = await api.GET('/admin/users', { params: { query: { limit: 1 } } });
    expect(page.data!.length).toBe(1);
    expect(page.response.headers.get('link')).toMatch(/rel="next"/);
  });

  it('disables an account (its sessions end, its tokens are refused, its flag shows) and enables it again; 404 for no such account', async () => {
    // The administrator works through a signed-in session, as the settings page does.
    await administrator('disabler@example.com');
    const { api } = await signIn(t.server, 'disabler@example.com');
    const { token } = await t.as('to-disable@example.com');
    const session = await signIn(t.server, 'to-disable@example.com');
    const userid = await idOf('to-disable@example.com');
    const { data: disabled } = await api.POST('/admin/users/{userid}', { params: { path: { userid } }, body: { disabled: true } });
    expect(disabled).toMatchObject({ id: userid, disabled: true });
    expect(await t.server.ctx.store.db.query('SELECT id FROM sessions WHERE user_id = $1', [userid])).toEqual([]);
    expect((await session.fetch('/me')).status).toBe(401);
    expect((await t.fetch('/me', { token })).status).toBe(401);
    const { data: enabled } = await api.POST('/admin/users/{userid}', { params: { path: { userid } }, body: { disabled: false } });
    expect(enabled).toMatchObject({ disabled: false });
    expect((await t.fetch('/me', { token })).status).toBe(200);
    const missing = await api.POST('/admin/users/{userid}', { params: { path: { userid: newId('usr') } }, body: { disabled: true } });
    expect(missing.response.status).toBe(404);
    const empty = await api.POST('/admin/users/{userid}', { params: { path: { userid } }, body: {} as { disabled: boolean } });
    expect(empty.response.status).toBe(400);
  });

  it('keeps one administrator who is not disabled: the last cannot remove their own administration, nor disable themselves (409)', async () => {
    // Alone on a server of its own, so that no other test's administrator counts.
    await t.server.ctx.store.db.execute('UPDATE users SET is_admin = 0');
    const { api } = await administrator('last-admin@example.com');
    const userid = await idOf('last-admin@example.com');
    for (const body of [{ admin: false }, { disabled: true }]) {
      const refused = await api.POST('/admin/users/{userid}', { params: { path: { userid } }, body });
      expect(refused.response.status, JSON.stringify(body)).toBe(409);
      expect(refused.error).toMatchObject({ type: '/problems/conflict', detail: expect.stringContaining('last administrator') });
    }
    expect(await t.server.ctx.store.userAdmin.get(userid)).toMatchObject({ admin: true, disabled: false });
    // With a second administrator, the first may step down.
    await t.as('second-admin@example.com');
    const second = await idOf('second-admin@example.com');
    expect((await api.POST('/admin/users/{userid}', { params: { path: { userid: second } }, body: { admin: true } })).data).toMatchObject({ admin: true });
    expect((await api.POST('/admin/users/{userid}', { params: { path: { userid } }, body: { admin: false } })).data).toMatchObject({ admin: false });
    expect((await api.GET('/admin/users')).response.status).toBe(403);
  });

  it("sets an account's own storage quota, which takes the place of STORAGE_QUOTA_BYTES, and null gives it the server's again", async () => {
    const { api } = await administrator('quota-admin@example.com');
    const { api: user } = await t.as('big-user@example.com');
    const userid = await idOf('big-user@example.com');
    const { data: project } = await user.POST('/projects', { body: { name: 'Big' } });
    const projectid = project!.id;
    const ask = (size: number) => user.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: `f${size}.bin`, mimeType: 'application/octet-stream', size } });
    expect((await ask(1500)).response.status).toBe(413);
    expect((await api.POST('/admin/users/{userid}', { params: { path: { userid } }, body: { storageQuota: 5000 } })).data).toMatchObject({ storageQuota: 5000 });
    expect((await ask(1500)).response.status).toBe(200);
    const over = await ask(4000);
    expect(over.response.status).toBe(413);
    expect(over.error).toMatchObject({ type: '/problems/storage-quota-exceeded', quota: 5000, used: 1500 });
    expect((await api.POST('/admin/users/{userid}', { params: { path: { userid } }, body: { storageQuota: null } })).data).toMatchObject({ storageQuota: null });
    expect((await ask(1)).error).toMatchObject({ quota: 1000 });
  });

  it('invites an address: a link to the sign-up page for seven days, stored only as a hash; an address with an account answers 409', async () => {
    const { api } = await administrator('inviter@example.com');
    const before = t.server.clock.now();
    const { data: invitation, error } = await api.POST('/admin/invitations', { body: { email: 'New.Person@Example.com', admin: true } });
    expect(error).toBeUndefined();
    // This server sends no mail: the link is for the administrator to send.
    expect(invitation).toMatchObject({ object: 'invitation', email: 'new.person@example.com', admin: true, mailed: false });
    const url = new URL(invitation!.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${t.server.ctx.config.publicUrl}/signup`);
    const secret = url.searchParams.get('invite')!;
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(invitation!.expiresAt - before).toBeGreaterThanOrEqual(INVITATION_MS);
    expect(invitation!.expiresAt - before).toBeLessThan(INVITATION_MS + 60_000);
    const rows = await t.server.ctx.store.db.query<Record<string, string | number | null>>('SELECT * FROM one_time_links WHERE id = $1', [invitation!.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      kind: 'invitation',
      email: 'new.person@example.com',
      secret_hash: createHash('sha256').update(secret).digest('hex'),
      created_by: await idOf('inviter@example.com'),
      time_used: null,
    });
    expect(JSON.parse(String(rows[0].data))).toEqual({ admin: true });
    expect(JSON.stringify(rows[0])).not.toContain(secret);

    const taken = await api.POST('/admin/invitations', { body: { email: 'inviter@example.com' } });
    expect(taken.response.status).toBe(409);
    const bad = await api.POST('/admin/invitations', { body: { email: 'not an address' } });
    expect(bad.response.status).toBe(400);
  });
});

describe.each(backends)('invitations by mail on %s', (backend) => {
  const env: Record<string, string> = { MAIL_FROM: 'Audio Share <audio@example.org>', JOB_POLL_MS: '20' };
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await startSmtpSink();
    env.SMTP_URL = sink.url;
  });
  const t = useTestServer(backend, env);
  afterAll(async () => {
    await sink.close();
  });

  it('mails the invitation to the address, from the job queue, with the link the answer holds; the invited person signs up with it', async () => {
    const { api } = await t.as('mailing-admin@example.com');
    await t.server.ctx.store.db.execute("UPDATE users SET is_admin = 1, name = 'Sam Rivera' WHERE email = 'mailing-admin@example.com'");
    const { data: invitation, error } = await api.POST('/admin/invitations', { body: { email: 'mailed.person@example.com' } });
    expect(error).toBeUndefined();
    expect(invitation!.mailed).toBe(true);
    const mail = await sink.nextTo('mailed.person@example.com');
    expect(mail.text).toContain('Sam Rivera');
    const link = linkTo(mail, '/signup');
    expect(link.href).toBe(invitation!.url);
    const origin = new URL(t.server.apiUrl).origin;
    const made = await t.fetch('/auth/signup', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: origin, 'Sec-Fetch-Site': 'same-origin' },
      body: JSON.stringify({ name: 'Mailed Person', email: 'mailed.person@example.com', password: 'a long and unusual passphrase', invite: link.searchParams.get('invite') }),
    });
    expect(made.status).toBe(200);
    expect(await made.json()).toMatchObject({ email: 'mailed.person@example.com', emailVerified: true, admin: false });
  });
});
