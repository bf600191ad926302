/**
 * What an app makes belongs to its grant (issue 28, "One door"), on both
 * stores, with two real OAuth apps of one person, each let in through the
 * consent page and acting with its own access token:
 *
 * - a webhook app A made is A's: app B answers 404 to every operation on it
 *   and does not list it; the person sees every one, each naming its app;
 * - revoking A, A's grant ending at oidc-provider (its refresh token
 *   revoked), its grant's expiry (the sweep), or deleting the app deletes
 *   its webhooks and their pending deliveries; an event after that gets a
 *   delivery to the person's own webhook and none to A's. That is read in
 *   the deliveries table (the outbox), and the receivers on loopback are
 *   asserted to have got nothing more once the delivery queue has settled,
 *   never by waiting for time to pass;
 * - Idempotency-Key is kept per app: two apps sending one key each get
 *   their own answer, and an app's retry (even with a refreshed token) is
 *   replayed.
 */
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';
import { signIn } from '../../testing/sessions.ts';
import { connectApp, startCallback } from '../../testing/oauth-partner.ts';
import { startReceiver, type Receiver } from '../../testing/webhook-receiver.ts';
import { until } from '../../testing/until.ts';
import { RETRY_DELAYS_MS } from '../webhooks/outbox.ts';

const SCOPE = 'webhooks:read webhooks:write projects:write players:write';

describe.each(backends)('what an OAuth app makes belongs to its grant, on %s', (backend) => {
  const t = useTestServer(backend, { WEBHOOK_ALLOW_PRIVATE: 'true' });
  let callback: Awaited<ReturnType<typeof startCallback>>;
  /** The person's own endpoint, which answers 200; and the apps' endpoint, which fails, so that a delivery to it stays pending. */
  let personal: Receiver;
  let apps: Receiver;
  beforeAll(async () => {
    callback = await startCallback();
    personal = await startReceiver();
    apps = await startReceiver();
    apps.fallback = 503;
  });
  afterAll(async () => {
    await personal?.close();
    await apps?.close();
    await callback?.stop();
  });

  let people = 0;
  /** A person of their own, signed in (session), with a personal token, and two apps let in. */
  async function person() {
    const email = `grants-${backend}-${people++}@example.com`;
    const session = await signIn(t.server, email);
    const { token } = await t.as(email);
    const connect = (name: string) => connectApp(t.server, session, { name, scope: SCOPE, redirectUri: callback.redirectUri });
    return { session, token, a: await connect('Mastering Desk'), b: await connect('Release Radar') };
  }

  const call = (token: string, method: string, path: string, body?: unknown) =>
    t.fetch(path, { method, token, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }) });
  const subscribe = async (token: string, url: string) => {
    const response = await call(token, 'POST', '/webhooks', { label: 'grants', url, events: ['project.created'] });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as { id: string; secret: string; app?: { id: string; name: string } };
  };
  const db = () => t.server.ctx.store.db;
  const count = async (sql: string, params: Array<string | number>) => Number((await db().query<{ n: number }>(sql, params))[0].n);
  const webhookRows = (id: string) => count('SELECT COUNT(*) AS n FROM webhooks WHERE id = $1', [id]);
  const deliveriesOf = (webhookId: string) => count('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE webhook_id = $1', [webhookId]);

  /** Waits until no delivery is claimed or due (the delivery row is its job): every event so far has been sent, or found nothing to send. */
  const settled = () =>
    until(async () => (await count('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE worker IS NOT NULL OR due_at <= $1', [t.server.clock.now()])) === 0, 'the deliveries to settle');

  /**
   * The person's webhook and app A's, both for project.created, and a first event that reaches both: the person's
   * delivery succeeds, A's endpoint fails and its delivery waits, pending, for its retry.
   */
  async function withPendingDelivery(who: Awaited<ReturnType<typeof person>>) {
    const mine = await subscribe(who.token, `${personal.url}/${who.a.appId}`);
    const theirs = await subscribe(who.a.accessToken, `${apps.url}/${who.a.appId}`);
    expect((await call(who.token, 'POST', '/projects', { name: 'Before' })).status).toBe(200);
    await until(async () => {
      const [row] = await db().query<{ status: string; attempts: string }>('SELECT status, attempts FROM webhook_deliveries WHERE webhook_id = $1', [theirs.id]);
      return row?.status === 'pending' && JSON.parse(row.attempts).length === 1;
    }, "the failed first attempt to A's endpoint");
    const toApp = () => apps.received.filter((request) => request.path === `/hooks/${who.a.appId}`).length;
    const toPerson = () => personal.received.filter((request) => request.path === `/hooks/${who.a.appId}`).length;
    await until(() => toPerson() === 1, "the person's delivery");
    expect(toApp()).toBe(1);
    return { mine, theirs, toApp, toPerson };
  }

  /**
   * After the app's webhook went: it and its deliveries are gone, and a new event is delivered to the person's webhook
   * but not to A's; once A's retry would have been due and the queue has settled, A's endpoint has still had just the
   * one attempt. Answers the webhooks the new event's deliveries are for, as the outbox holds them.
   */
  async function expectNothingMoreFor(who: Awaited<ReturnType<typeof person>>, setup: Awaited<ReturnType<typeof withPendingDelivery>>, name: string) {
    expect(await webhookRows(setup.theirs.id)).toBe(0);
    expect(await deliveriesOf(setup.theirs.id)).toBe(0);
    expect((await call(who.token, 'POST', '/projects', { name })).status).toBe(200);
    const deliveries = await db().query<{ webhook_id: string }>('SELECT webhook_id FROM webhook_deliveries WHERE body LIKE $1 ORDER BY webhook_id', [`%"name":"${name}"%`]);
    await until(() => setup.toPerson() === 2, "the person's second delivery");
    // The retry A's failed delivery had scheduled is due now: its job finds nothing to send.
    t.server.clock.advance(RETRY_DELAYS_MS[0]);
    t.server.webhookWorker!.nudge();
    await settled();
    expect(setup.toApp()).toBe(1);
    return deliveries.map((row) => row.webhook_id);
  }

  it("lets an app see and manage only its own webhooks: another app's answers 404 and is not listed; the person sees all, each naming its app", async () => {
    const who = await person();
    const ofA = await subscribe(who.a.accessToken, `${personal.url}/ownership`);
    expect(ofA.app).toEqual({ id: who.a.appId, name: 'Mastering Desk' });
    const ofB = await subscribe(who.b.accessToken, `${personal.url}/ownership`);
    const own = await subscribe(who.token, `${personal.url}/ownership`);
    expect(own).not.toHaveProperty('app');

    const path = `/webhooks/${ofA.id}`;
    for (const [method, target, body] of [
      ['GET', path],
      ['POST', path, { label: 'taken over' }],
      ['POST', `${path}/secret`],
      ['GET', `${path}/deliveries`],
      ['POST', `${path}/deliveries/msg_0000000000000000/redeliver`],
      ['DELETE', path],
    ] as Array<[string, string, unknown?]>) {
      const refused = await call(who.b.accessToken, method, target, body);
      expect(refused.status, `${method} ${target}`).toBe(404);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect((await refused.json()).detail).toMatch(/an app sees only the webhooks it made/);
    }
    // Nor may an app reach the person's own.
    expect((await call(who.a.accessToken, 'GET', `/webhooks/${own.id}`)).status).toBe(404);
    // Nothing of A's changed.
    expect(await webhookRows(ofA.id)).toBe(1);
    expect(((await (await call(who.a.accessToken, 'GET', path)).json()) as { label: string }).label).toBe('grants');

    const listed = async (token: string) => ((await (await call(token, 'GET', '/webhooks')).json()) as Array<{ id: string; app?: { id: string; name: string } }>);
    expect((await listed(who.a.accessToken)).map((webhook) => webhook.id)).toEqual([ofA.id]);
    expect((await listed(who.b.accessToken)).map((webhook) => webhook.id)).toEqual([ofB.id]);
    const everything = await listed(who.token);
    expect(everything.map((webhook) => [webhook.id, webhook.app])).toEqual([
      [ofA.id, { id: who.a.appId, name: 'Mastering Desk' }],
      [ofB.id, { id: who.b.appId, name: 'Release Radar' }],
      [own.id, undefined],
    ]);
    // The session sees the same, and the person may manage an app's webhook: rotate its secret, or delete it.
    const bySession = (await (await who.session.fetch('/webhooks')).json()) as Array<{ id: string }>;
    expect(bySession.map((webhook) => webhook.id)).toEqual([ofA.id, ofB.id, own.id]);
    expect((await call(who.token, 'POST', `/webhooks/${ofB.id}/secret`)).status).toBe(200);
    expect((await who.session.fetch(`/webhooks/${ofB.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await call(who.b.accessToken, 'GET', `/webhooks/${ofB.id}`)).status).toBe(404);
  });

  it('deletes the webhooks an app made, and their pending deliveries, when the person revokes it; an event after reaches only their own', async () => {
    const who = await person();
    const setup = await withPendingDelivery(who);
    const ofB = await subscribe(who.b.accessToken, `${apps.url}/untouched`);
    expect((await who.session.fetch(`/me/connected-apps/${who.a.appId}`, { method: 'DELETE' })).status).toBe(200);
    expect((await call(who.a.accessToken, 'GET', '/webhooks')).status).toBe(401);
    // Another app's webhook, and the person's, are left as they were, and get the event.
    expect(await expectNothingMoreFor(who, setup, 'After revoking')).toEqual([setup.mine.id, ofB.id].sort());
  });

  it('deletes them when the app is deleted (DELETE /apps/{appid})', async () => {
    const who = await person();
    const setup = await withPendingDelivery(who);
    expect((await who.session.fetch(`/apps/${who.a.appId}`, { method: 'DELETE' })).status).toBe(200);
    expect(await expectNothingMoreFor(who, setup, 'After deleting the app')).toEqual([setup.mine.id]);
  });

  it("deletes them when the grant ends at the authorization server: the app's refresh token revoked (RFC 7009)", async () => {
    const who = await person();
    const setup = await withPendingDelivery(who);
    await client.tokenRevocation(who.a.config, who.a.refreshToken);
    expect(await expectNothingMoreFor(who, setup, 'After the grant ended')).toEqual([setup.mine.id]);
  });

  it('deletes them in the periodic sweep once their grant has expired', async () => {
    const who = await person();
    const setup = await withPendingDelivery(who);
    const grantId = (await db().query<{ grant_id: string }>('SELECT grant_id FROM webhooks WHERE id = $1', [setup.theirs.id]))[0].grant_id;
    // A grant lives a year after it was last renewed: this one's year is up.
    await db().execute("UPDATE oauth_records SET time_expires = $2 WHERE model = 'Grant' AND grant_id = $1", [grantId, t.server.clock.now() - 1]);
    await t.server.sweep();
    expect(await expectNothingMoreFor(who, setup, 'After the grant expired')).toEqual([setup.mine.id]);
  });

  it("keeps Idempotency-Key per app: two apps' one key are two answers, and an app's retry, even with a refreshed token, is replayed", async () => {
    const who = await person();
    const key = `"grants-${backend}-${Date.now()}"`;
    const post = (token: string) => t.fetch('/players', { method: 'POST', token, body: JSON.stringify({ name: 'Same key' }), headers: { 'content-type': 'application/json', 'Idempotency-Key': key } });
    const idOf = async (response: Response) => ((await response.json()) as { id: string }).id;

    const ofA = await post(who.a.accessToken);
    expect(ofA.status).toBe(200);
    const playerOfA = await idOf(ofA);
    const ofB = await post(who.b.accessToken);
    expect(ofB.status).toBe(200);
    expect(ofB.headers.get('idempotent-replayed')).toBeNull();
    const playerOfB = await idOf(ofB);
    expect(playerOfB).not.toBe(playerOfA);
    // The person's own token, with the same key: a third answer of its own.
    const ofPerson = await post(who.token);
    expect(ofPerson.headers.get('idempotent-replayed')).toBeNull();
    expect(await idOf(ofPerson)).not.toBe(playerOfA);

    const retry = await post(who.a.accessToken);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await idOf(retry)).toBe(playerOfA);
    // An hour's access token renewed: the same app's grant, so the same key's answer.
    const renewed = await client.refreshTokenGrant(who.a.config, who.a.refreshToken);
    const afterRefresh = await post(renewed.access_token);
    expect(afterRefresh.headers.get('idempotent-replayed')).toBe('true');
    expect(await idOf(afterRefresh)).toBe(playerOfA);
    const retryOfB = await post(who.b.accessToken);
    expect(await idOf(retryOfB)).toBe(playerOfB);
  });
});

