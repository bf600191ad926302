/**
 * Notifications end to end, on SQLite and PostgreSQL: a real server that
 * mails through nodemailer to a real SMTP server on loopback
 * (server/testing/smtp-sink.ts), comments by a guest on a player page and
 * by members through the API, a file through the upload portal, an audio
 * file that fails its analysis (ffmpeg, in-process). The daily digest waits
 * for the test clock to pass midnight UTC, never for real time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../../../generated/client.ts';
import { backends } from '../../testing/databases.ts';
import { json, useTestServer, type Harness } from '../../testing/harness.ts';
import { until } from '../../testing/until.ts';
import { linkTo, linksIn, startSmtpSink, type SmtpSink } from '../../testing/smtp-sink.ts';
import { sineWav } from '../../testing/audio.ts';
import { patchUpload, startPortalUpload } from '../../testing/portal.ts';
import { waitForStatus } from '../../testing/files.ts';
import { NOTIFICATION_DIGEST, NOTIFICATION_MAIL, nextDigestAt } from './notifications-service.ts';

type Notification = Schemas['Notification'];

/** Opens a listener session with a display name on a public player, as its page does; the Cookie header that carries it. */
async function guestSession(t: Harness, playerid: string, name: string): Promise<string> {
  const response = await t.fetch(`/players/${playerid}/session`, { ...json({ name }), headers: { 'Content-Type': 'application/json', 'Sec-Fetch-Site': 'same-origin' } });
  expect(response.status, await response.clone().text()).toBe(200);
  return response.headers.get('set-cookie')!.split(';')[0];
}

async function guestComment(t: Harness, cookie: string, playerid: string, fileid: string, body: Record<string, unknown>): Promise<Schemas['Comment']> {
  const response = await t.fetch(`/players/${playerid}/files/${fileid}/comments`, { ...json(body), headers: { 'Content-Type': 'application/json', 'Sec-Fetch-Site': 'same-origin', Cookie: cookie } });
  const answer = await response.json();
  expect(response.status, JSON.stringify(answer)).toBe(200);
  return answer;
}

let n = 0;

/** A fresh owner with a project of one file, a public player with comments on, and an editor collaborator with an account. */
async function setup(t: Harness, track = 'Night Drive <final>.wav') {
  n += 1;
  const ownerEmail = `owner-${n}@example.com`;
  const owner = await t.as(ownerEmail);
  const { data: project } = await owner.api.POST('/projects', { body: { name: `Album ${n}` } });
  const projectid = project!.id;
  // Real audio: where analyses run, a file that failed one would notify too.
  const { data } = await owner.api.uploadFile(projectid, { name: track, mimeType: 'audio/wav' }, await sineWav(1));
  const editorEmail = `editor-${n}@example.com`;
  const { data: player, error } = await owner.api.POST('/players', {
    body: { name: 'For the label', projectid, public: true, options: { comments: true }, collaborators: [{ email: editorEmail, role: 'editor' }] },
  });
  if (!player) throw new Error(JSON.stringify(error));
  return { owner, ownerEmail, editor: await t.as(editorEmail), editorEmail, projectid, fileid: data!.upload.boxid, playerid: player.id };
}

async function notificationsOf(t: Harness, token: string, query = ''): Promise<Notification[]> {
  const response = await t.fetch(`/me/notifications${query}`, { token });
  expect(response.status).toBe(200);
  return response.json();
}

const jobsOf = async (t: Harness, kind: string, containing: string) =>
  t.server.ctx.store.db.query<{ status: string; run_at: number | string }>('SELECT status, run_at FROM jobs WHERE kind = $1 AND payload LIKE $2', [kind, `%${containing}%`]);

describe.each(backends)('notifications on %s', (backend) => {
  const env: Record<string, string> = { MAIL_FROM: 'Audio Share <audio@example.org>', JOB_POLL_MS: '20', PROCESSING: 'in-process', JOB_BACKOFF_MS: '100' };
  let sink: SmtpSink;
  // Before the server's beforeAll (hooks run in the order they are declared): it needs the sink's address.
  beforeAll(async () => {
    sink = await startSmtpSink();
    env.SMTP_URL = sink.url;
  });
  const t = useTestServer(backend, env);
  afterAll(async () => {
    await sink.close();
  });

  it('mails the owner a guest’s comment at once, naming the track and linking to the comment, and lists it unread', async () => {
    const { owner, ownerEmail, projectid, fileid, playerid } = await setup(t);
    const cookie = await guestSession(t, playerid, 'Alex <A&R>');
    const comment = await guestComment(t, cookie, playerid, fileid, { message: 'Love the <b>bridge</b>\n\nClick https://evil.example', audioTimestamp: 0.5 });

    const mail = await sink.nextTo(ownerEmail);
    expect(mail.subject).toBe('Alex <A&R> (guest) commented on “Night Drive <final>.wav”');
    expect(mail.text).toContain('Alex <A&R> (guest) commented on “Night Drive <final>.wav” in Album');
    expect(mail.text).toContain('“Love the <b>bridge</b> Click https://evil.example”');
    const link = linkTo(mail, `/projects/${projectid}`);
    expect(link.toString()).toBe(`${t.server.ctx.config.publicUrl}/projects/${projectid}?file=${fileid}#comment-${comment.id}`);
    // Everything someone wrote is escaped in the HTML: no tag of theirs, and the link is ours.
    expect(mail.html).not.toContain('<b>bridge</b>');
    expect(mail.html).toContain('Love the &lt;b&gt;bridge&lt;/b&gt;');
    expect(mail.html).toContain('Alex &lt;A&amp;R&gt; (guest)');
    expect(mail.html).toContain(`href="${link.toString()}"`);

    const [listed, ...others] = await notificationsOf(t, owner.token);
    expect(others).toEqual([]);
    expect(listed).toEqual({
      id: expect.stringMatching(/^ntf_/),
      object: 'notification',
      kind: 'comment',
      projectid,
      fileid,
      commentid: comment.id,
      summary: 'Alex <A&R> (guest) commented on “Night Drive <final>.wav”: “Love the <b>bridge</b> Click https://evil.example”',
      link: `/projects/${projectid}?file=${fileid}#comment-${comment.id}`,
      timeCreated: expect.any(Number),
      read: false,
    });
    expect(await notificationsOf(t, owner.token, '?unread=true')).toHaveLength(1);
    const marked = await t.fetch('/me/notifications/read', { ...json({}), token: owner.token });
    expect(await marked.json()).toEqual({ unread: 0 });
    expect((await notificationsOf(t, owner.token))[0].read).toBe(true);
    expect(await notificationsOf(t, owner.token, '?unread=true')).toEqual([]);
    // The first test of the file also waits for ffmpeg's first analysis of this server: slow on a loaded machine.
  }, 90_000);

  it('does not notify the owner of their own comment, nor anyone else of it', async () => {
    const { owner, editor, projectid, fileid } = await setup(t);
    const own = await owner.api.POST('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid, fileid } }, body: { message: 'Note to self' } });
    expect(own.response.status).toBe(200);
    // The editor's comment, after it, is the only notification the owner gets.
    const theirs = await editor.api.POST('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid, fileid } }, body: { message: 'Kick is late' } });
    const listed = await notificationsOf(t, owner.token);
    expect(listed.map((one) => one.commentid)).toEqual([theirs.data!.id]);
    expect(listed[0].summary).toBe('Project member commented on “Night Drive <final>.wav”: “Kick is late”');
    expect(await notificationsOf(t, editor.token)).toEqual([]);
  });

  it('mails a reply to the author of the comment, when they have an account, and tells the owner of the reply as a comment', async () => {
    const { ownerEmail, editor, editorEmail, projectid, fileid, playerid } = await setup(t);
    // The player's invitation came first.
    expect((await sink.nextTo(editorEmail)).text).toContain('shared the player “For the label” with you');
    await editor.api.POST('/me', { body: { name: 'Eddie' } });
    const { data: parent } = await editor.api.POST('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid, fileid } }, body: { message: 'Too much reverb?' } });
    const ownerMail = await sink.nextTo(ownerEmail);
    expect(ownerMail.subject).toBe('Eddie commented on “Night Drive <final>.wav”');

    const cookie = await guestSession(t, playerid, 'Sam');
    const reply = await guestComment(t, cookie, playerid, fileid, { message: 'Agreed, less please', parentid: parent!.id });
    const replyMail = await sink.nextTo(editorEmail);
    expect(replyMail.subject).toBe('Sam (guest) replied to your comment on “Night Drive <final>.wav”');
    expect(linkTo(replyMail, `/projects/${projectid}`).toString()).toBe(`${t.server.ctx.config.publicUrl}/projects/${projectid}?file=${fileid}#comment-${reply.id}`);
    const [replied] = await notificationsOf(t, editor.token);
    expect(replied).toMatchObject({ kind: 'reply', commentid: reply.id });
    const secondOwnerMail = await sink.nextTo(ownerEmail);
    expect(secondOwnerMail.subject).toBe('Sam (guest) commented on “Night Drive <final>.wav”');
  });

  it('with the daily digest, mails nothing until midnight UTC, then one mail with every notification of the day', async () => {
    const { owner, ownerEmail, projectid, fileid, playerid } = await setup(t);
    const settings = await t.fetch('/me/notification-settings', { ...json({ mail: 'digest' }), token: owner.token });
    expect(await settings.json()).toEqual({ mail: 'digest' });
    const cookie = await guestSession(t, playerid, 'Robin');
    const first = await guestComment(t, cookie, playerid, fileid, { message: 'First thought' });
    const second = await guestComment(t, cookie, playerid, fileid, { message: 'Second thought' });
    const { data: me } = await owner.api.GET('/me');

    // One digest scheduled for the two, at the next midnight UTC, and no mail of its own for either.
    const scheduled = await jobsOf(t, NOTIFICATION_DIGEST, me!.id);
    expect(scheduled).toHaveLength(1);
    expect(Number(scheduled[0].run_at)).toBe(nextDigestAt(t.server.clock.now()));
    const waiting = await notificationsOf(t, owner.token);
    expect(waiting).toHaveLength(2);
    for (const one of waiting) expect(await jobsOf(t, NOTIFICATION_MAIL, one.id)).toEqual([]);
    expect(sink.received.filter((mail) => mail.to.includes(ownerEmail))).toEqual([]);

    t.server.clock.advance(nextDigestAt(t.server.clock.now()) - t.server.clock.now());
    const digest = await sink.nextTo(ownerEmail);
    expect(digest.subject).toBe('Your daily digest: 2 notifications');
    expect(digest.text).toContain('Robin (guest) commented on “Night Drive <final>.wav”: “First thought”');
    expect(digest.text).toContain('Robin (guest) commented on “Night Drive <final>.wav”: “Second thought”');
    const base = `${t.server.ctx.config.publicUrl}/projects/${projectid}?file=${fileid}`;
    expect(linksIn(digest)).toEqual(expect.arrayContaining([`${base}#comment-${first.id}`, `${base}#comment-${second.id}`]));
    expect(digest.html).toContain(`<a href="${base}#comment-${first.id}">`);
    await until(async () => (await jobsOf(t, NOTIFICATION_DIGEST, me!.id))[0]?.status === 'done', 'the digest job to be done');
    expect(sink.received.filter((mail) => mail.to.includes(ownerEmail))).toHaveLength(1);

    // The next comment schedules the next day's digest.
    await guestComment(t, cookie, playerid, fileid, { message: 'Third thought' });
    const next = await jobsOf(t, NOTIFICATION_DIGEST, me!.id);
    expect(next.map((job) => Number(job.run_at)).sort()).toEqual([Number(scheduled[0].run_at), nextDigestAt(t.server.clock.now())]);
  });

  it('with never, mails nothing and queues nothing, yet lists the notification', async () => {
    const { owner, projectid, fileid, playerid } = await setup(t);
    const settings = await t.fetch('/me/notification-settings', { ...json({ mail: 'never' }), token: owner.token });
    expect(await settings.json()).toEqual({ mail: 'never' });
    const cookie = await guestSession(t, playerid, 'Kim');
    const comment = await guestComment(t, cookie, playerid, fileid, { message: 'Quiet please' });
    const [listed] = await notificationsOf(t, owner.token);
    expect(listed).toMatchObject({ kind: 'comment', projectid, commentid: comment.id });
    const [row] = await t.server.ctx.store.db.query<{ mail: string }>('SELECT mail FROM notifications WHERE id = $1', [listed.id]);
    expect(row.mail).toBe('none');
    expect(await jobsOf(t, NOTIFICATION_MAIL, listed.id)).toEqual([]);
    const { data: me } = await owner.api.GET('/me');
    expect(await jobsOf(t, NOTIFICATION_DIGEST, me!.id)).toEqual([]);
  });

  it('tells the owner of a file that came through the upload portal, and of a file whose analysis failed', async () => {
    n += 1;
    const ownerEmail = `portal-owner-${n}@example.com`;
    const owner = await t.as(ownerEmail);
    const { data: player } = await owner.api.POST('/players', { body: { name: 'Send stems', upload: { enabled: true, header: 'Stems here' } } });
    const wav = await sineWav(1);
    const url = await startPortalUpload(t.server.apiUrl, player!.id, { size: wav.length, filename: 'bass.wav', filetype: 'audio/wav', name: 'Sam Rivera' });
    expect((await patchUpload(url, 0, wav)).status).toBe(204);
    const portalMail = await sink.nextTo(ownerEmail);
    expect(portalMail.subject).toBe('“bass.wav” arrived through your upload portal');
    const [arrived] = await notificationsOf(t, owner.token);
    expect(arrived).toMatchObject({ kind: 'portal-upload', projectid: player!.projectid, summary: 'Sam Rivera sent “bass.wav” through the upload portal of “Send stems”' });
    expect(arrived).not.toHaveProperty('commentid');
    expect(linkTo(portalMail, `/projects/${player!.projectid}`).toString()).toBe(`${t.server.ctx.config.publicUrl}${arrived.link}`);

    const broken = new Uint8Array(4096).map((_, i) => (i * 31) % 251);
    const { data } = await owner.api.uploadFile(player!.projectid, { name: 'broken.mp3', mimeType: 'audio/mpeg' }, broken);
    await waitForStatus(owner.api, player!.projectid, data!.box.id, ['failed']);
    const failedMail = await sink.nextTo(ownerEmail);
    expect(failedMail.subject).toBe('“broken.mp3” could not be analysed');
    const [failed] = await notificationsOf(t, owner.token);
    expect(failed).toMatchObject({ kind: 'analysis-failed', fileid: data!.box.id, link: `/projects/${player!.projectid}?file=${data!.box.id}` });
    expect(failed.summary).toMatch(/^“broken\.mp3” could not be analysed: /);
    // ffmpeg analyses both files: on a loaded machine that takes longer than a request does.
  }, 120_000);

  it('marks only the account’s own notifications read, and forgets those of a deleted comment', async () => {
    const { owner, editor, projectid, fileid } = await setup(t);
    const post = (message: string) => editor.api.POST('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid, fileid } }, body: { message } });
    const one = (await post('one')).data!;
    await post('two');
    const listed = await notificationsOf(t, owner.token);
    expect(listed.map((item) => item.summary)).toEqual(['Project member commented on “Night Drive <final>.wav”: “two”', 'Project member commented on “Night Drive <final>.wav”: “one”']);
    // Someone else's id changes nothing of theirs.
    const foreign = await t.fetch('/me/notifications/read', { ...json({ ids: [listed[0].id] }), token: editor.token });
    expect(await foreign.json()).toEqual({ unread: 0 });
    const marked = await t.fetch('/me/notifications/read', { ...json({ ids: [listed[1].id, 'ntf_unknown'] }), token: owner.token });
    expect(await marked.json()).toEqual({ unread: 1 });
    expect((await notificationsOf(t, owner.token)).map((item) => item.read)).toEqual([false, true]);
    await editor.api.DELETE('/projects/{projectid}/files/{fileid}/comments/{commentid}', { params: { path: { projectid, fileid, commentid: one.id } } });
    expect((await notificationsOf(t, owner.token)).map((item) => item.id)).toEqual([listed[0].id]);
  });

  it('pages the list newest first, keeping the unread filter on the next page', async () => {
    const { owner, editor, projectid, fileid } = await setup(t);
    for (const message of ['a', 'b', 'c']) await editor.api.POST('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid, fileid } }, body: { message } });
    const all = await notificationsOf(t, owner.token);
    await t.fetch('/me/notifications/read', { ...json({ ids: [all[1].id] }), token: owner.token });
    const first = await t.fetch('/me/notifications?unread=true&limit=1', { token: owner.token });
    expect((await first.json()).map((item: Notification) => item.id)).toEqual([all[0].id]);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
    expect(next).toContain('unread=true');
    const second = await fetch(next!, { headers: { Authorization: `Bearer ${owner.token}` } });
    expect((await second.json()).map((item: Notification) => item.id)).toEqual([all[2].id]);
    expect(second.headers.get('link')).toBeNull();
  });
});

describe.each(backends)('notifications without mail on %s', (backend) => {
  const t = useTestServer(backend);

  it('are only in the app: nothing is queued to mail them', async () => {
    const { owner, editor, projectid, fileid } = await setup(t);
    expect(t.server.ctx.config.mail).toBeUndefined();
    await editor.api.POST('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid, fileid } }, body: { message: 'Hello' } });
    const [listed] = await notificationsOf(t, owner.token);
    expect(listed.kind).toBe('comment');
    const [{ count }] = await t.server.ctx.store.db.query<{ count: number | string }>('SELECT COUNT(*) AS count FROM jobs WHERE kind IN ($1, $2)', [NOTIFICATION_MAIL, NOTIFICATION_DIGEST]);
    expect(Number(count)).toBe(0);
    const settings = await t.fetch('/me/notification-settings', { token: owner.token });
    expect(await settings.json()).toEqual({ mail: 'immediate' });
  });
});
