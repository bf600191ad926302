import { describe, expect, it } from 'vitest';
import { account, adminToken, client, onMock, raw } from './support/context.ts';

const admin = client(adminToken);
const api = client();
const json = { 'Content-Type': 'application/json' };

describe('administration (extension)', () => {
  it('listUsers answers an administrator with the accounts', async () => {
    const { data, response } = await admin.GET('/admin/users', { params: { query: { limit: 5 } } });
    expect(response.status).toBe(200);
    expect(data!.length).toBeGreaterThan(0);
    expect(data![0].object).toBe('user');
  });

  it('listUsers refuses a missing token (401), and on a real server an account that is not an administrator (403)', async () => {
    expect((await raw('/admin/users', { token: null })).status).toBe(401);
    if (!onMock) expect((await api.GET('/admin/users')).response.status).toBe(403);
  });

  it('updateUser changes an account, and refuses an empty change (400)', async () => {
    const { data: users } = await admin.GET('/admin/users');
    const userid = (onMock ? users![0] : users!.find((user) => user.email === account.email))!.id;
    const { data, response } = await admin.POST('/admin/users/{userid}', { params: { path: { userid } }, body: { storageQuota: null } });
    expect(response.status).toBe(200);
    expect(data!.id).toBe(userid);
    const refused = await raw(`/admin/users/${userid}`, { method: 'POST', headers: json, body: JSON.stringify({}), token: adminToken });
    expect(refused.status).toBe(400);
  });

  it('updateUser and createInvitation refuse an account that is not an administrator (403; 401 without a token)', async () => {
    const invited = await raw('/admin/invitations', { method: 'POST', headers: json, body: JSON.stringify({ email: 'contract-invited@example.com' }), token: null });
    expect(invited.status).toBe(401);
    if (onMock) return;
    expect((await api.POST('/admin/invitations', { body: { email: 'contract-invited@example.com' } })).response.status).toBe(403);
    expect((await api.POST('/admin/users/{userid}', { params: { path: { userid: 'usr_nobody' } }, body: { admin: true } })).response.status).toBe(403);
  });

  it('createInvitation answers a link to the sign-up page, and refuses an address that is not one (400)', async () => {
    const { data, response } = await admin.POST('/admin/invitations', { body: { email: `contract-invited-${Date.now()}@example.com` } });
    expect(response.status).toBe(200);
    expect(new URL(data!.url).pathname).toBe('/signup');
    const refused = await raw('/admin/invitations', { method: 'POST', headers: json, body: JSON.stringify({ email: 'not an address' }), token: adminToken });
    expect(refused.status).toBe(400);
  });
});
