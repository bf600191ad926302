import { describe, expect, it } from 'vitest';
import { client, raw } from './support/context.ts';

const api = client();

describe("the account's security (extension)", () => {
  it('listSecurityEvents answers the account its events, and refuses a missing token (401) and a bad limit (400)', async () => {
    const { data, response } = await api.GET('/me/security-events', { params: { query: { limit: 10 } } });
    expect(response.status).toBe(200);
    expect(Array.isArray(data)).toBe(true);
    expect((await raw('/me/security-events', { token: null })).status).toBe(401);
    expect((await raw('/me/security-events?limit=0')).status).toBe(400);
  });
});
