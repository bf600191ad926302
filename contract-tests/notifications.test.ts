/**
 * Notifications and their settings (extension), with the suite's bearer
 * token. On a real server the account gets one: a listener comments on a
 * public player of its project. The mock keeps no state and answers the
 * spec's examples, so there only the shape of each answer is checked.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { client, onMock, raw } from './support/context.ts';

const api = client();
const json = { 'Content-Type': 'application/json' };
/** The comment a listener made on the account's project (none on the mock). */
let commentid: string | undefined;

beforeAll(async () => {
  if (onMock) return;
  const { data: project } = await api.POST('/projects', { body: { name: 'Contract: notifications' } });
  const { data: file, error } = await api.uploadFile(project!.id, { name: 'notified.wav', mimeType: 'audio/wav' }, new TextEncoder().encode('RIFF contract notification bytes'));
  expect(error).toBeUndefined();
  const { data: player } = await api.POST('/players', { body: { name: 'Contract: notifications', projectid: project!.id, public: true, options: { comments: true } } });
  const session = await raw(`/players/${player!.id}/session`, { method: 'POST', token: null, headers: { ...json, 'Sec-Fetch-Site': 'same-origin' }, body: JSON.stringify({ name: 'Contract guest' }) });
  expect(session.status).toBe(200);
  const cookie = session.headers.get('set-cookie')!.split(';')[0];
  const comment = await raw(`/players/${player!.id}/files/${file!.box.id}/comments`, {
    method: 'POST',
    token: null,
    headers: { ...json, 'Sec-Fetch-Site': 'same-origin', Cookie: cookie },
    body: JSON.stringify({ message: 'A note for the owner' }),
  });
  expect(comment.status).toBe(200);
  commentid = (await comment.json()).id;
});

describe('notifications (extension)', () => {
  it('listNotifications lists the account’s notifications newest first, pages them, and refuses a bad filter or limit', async () => {
    const listed = await api.GET('/me/notifications');
    expect(listed.response.status).toBe(200);
    if (!onMock) expect(listed.data!.find((one) => one.commentid === commentid)).toMatchObject({ kind: 'comment', read: false });
    const unread = await api.GET('/me/notifications', { params: { query: { unread: true, limit: 1 } } });
    expect(unread.response.status).toBe(200);
    if (!onMock) expect(unread.data!.length).toBeLessThanOrEqual(1);
    expect((await raw('/me/notifications?unread=maybe')).status).toBe(400);
    expect((await raw('/me/notifications?limit=0')).status).toBe(400);
    expect((await raw('/me/notifications', { token: null })).status).toBe(401);
  });

  it('markNotificationsRead marks some or all read and answers how many are unread; refuses an empty or unknown field', async () => {
    const some = await api.POST('/me/notifications/read', { body: { ids: ['ntf_4k8m2p6r9t'] } });
    expect(some.response.status).toBe(200);
    expect(some.data!.unread).toBeGreaterThanOrEqual(0);
    const all = await api.POST('/me/notifications/read', { body: {} });
    expect(all.response.status).toBe(200);
    if (!onMock) {
      expect(all.data).toEqual({ unread: 0 });
      expect((await api.GET('/me/notifications', { params: { query: { unread: true } } })).data).toEqual([]);
    }
    expect((await raw('/me/notifications/read', { method: 'POST', headers: json, body: JSON.stringify({ ids: [] }) })).status).toBe(400);
    expect((await raw('/me/notifications/read', { method: 'POST', headers: json, body: JSON.stringify({ all: true }) })).status).toBe(400);
  });

  it('getNotificationSettings and updateNotificationSettings read and change how notifications are mailed; an unknown setting is refused', async () => {
    const got = await api.GET('/me/notification-settings');
    expect(got.response.status).toBe(200);
    expect(['immediate', 'digest', 'never']).toContain(got.data!.mail);
    const changed = await api.POST('/me/notification-settings', { body: { mail: 'digest' } });
    expect(changed.response.status).toBe(200);
    if (!onMock) {
      expect(changed.data).toEqual({ mail: 'digest' });
      expect((await api.GET('/me/notification-settings')).data).toEqual({ mail: 'digest' });
      await api.POST('/me/notification-settings', { body: { mail: 'immediate' } });
    }
    expect((await raw('/me/notification-settings', { method: 'POST', headers: json, body: JSON.stringify({ mail: 'hourly' }) })).status).toBe(400);
    expect((await raw('/me/notification-settings?x=1')).status).toBe(400);
  });
});
