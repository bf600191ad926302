/**
 * Webhooks end to end: a real server on each store, and a real receiver on
 * loopback that verifies every delivery with the `standardwebhooks`
 * package, as a partner's endpoint would. Retries are driven by the test
 * clock, never by waiting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';
import { until } from '../../testing/until.ts';
import { startReceiver, type Receiver, type Received } from '../../testing/webhook-receiver.ts';
import { recordEvent, RETRY_DELAYS_MS } from './outbox.ts';
import { startWebhookWorker } from './webhook-delivery.ts';
import { refusalOf } from '../../lib/outbound-addresses.ts';
import { sendWebhook } from './webhook-sender.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { Worker } from '../../jobs/worker.ts';
import type { Store } from '../../repositories.ts';
import { sineWav } from '../../testing/audio.ts';

type Event = Schemas['WebhookEvent'];
const eventOf = (request: Received) => JSON.parse(request.body) as Event;
const headersOf = (request: Received) => ({
  'webhook-id': String(request.headers['webhook-id']),
  'webhook-timestamp': String(request.headers['webhook-timestamp']),
  'webhook-signature': String(request.headers['webhook-signature']),
});

/**
 * The signatures `secret` makes of the request, as the verifier computes
 * them, for the tests that move the server's clock: the verifier itself
 * would call a timestamp from the server's future too new.
 */
const signatureBy = (secret: string, request: Received) =>
  new Webhook(secret).sign(String(request.headers['webhook-id']), new Date(Number(request.headers['webhook-timestamp']) * 1000), request.body);

describe.each(backends)('webhooks on %s', (backend) => {
  const t = useTestServer(backend, { WEBHOOK_ALLOW_PRIVATE: 'true' });
  let receiver: Receiver;
  let email = 0;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  let replacement: Worker<Store> | undefined;
  afterAll(async () => {
    await replacement?.stop(0);
    await receiver.close();
  });

  /** A user of their own, with a subscription to `events` at the receiver; answers its secret. */
  async function subscriber(events: Schemas['WebhookEventType'][]) {
    const { api, token } = await t.as(`hooks-${email++}@example.com`);
    receiver.received.length = 0;
    receiver.answers.length = 0;
    receiver.fallback = 200;
    const { data, error } = await api.POST('/webhooks', { body: { label: 'test', url: receiver.url, events } });
    expect(error).toBeUndefined();
    return { api, token, webhook: data! };
  }

  /** Waits until no delivery is claimed or due (the delivery row is its job): every event written so far has been sent, or given up. */
  const settled = () =>
    until(async () => {
      const [row] = await t.server.ctx.store.db.query<{ n: number }>(
        'SELECT COUNT(*) AS n FROM webhook_deliveries WHERE worker IS NOT NULL OR due_at <= $1',
        [t.server.clock.now()],
      );
      return Number(row.n) === 0;
    }, 'the deliveries to settle');

  it('creates, lists, reads, updates and deletes a subscription; the secret is shown once, in the Standard Webhooks form', async () => {
    const { api, webhook } = await subscriber(['player.created']);
    expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(webhook).toMatchObject({ object: 'webhook', enabled: true, disabledReason: null, events: ['player.created'] });
    const listed = await api.GET('/webhooks');
    expect(listed.data!.map((one) => one.id)).toEqual([webhook.id]);
    expect(listed.data![0]).not.toHaveProperty('secret');
    const updated = await api.POST('/webhooks/{webhookid}', { params: { path: { webhookid: webhook.id } }, body: { label: 'renamed', events: ['player.updated'] } });
    expect(updated.data).toMatchObject({ label: 'renamed', events: ['player.updated'] });
    // Another account sees nothing of it.
    const stranger = (await t.as('stranger@example.com')).api;
    expect((await stranger.GET('/webhooks/{webhookid}', { params: { path: { webhookid: webhook.id } } })).response.status).toBe(404);
    expect((await api.DELETE('/webhooks/{webhookid}', { params: { path: { webhookid: webhook.id } } })).response.status).toBe(200);
    expect((await api.GET('/webhooks/{webhookid}', { params: { path: { webhookid: webhook.id } } })).response.status).toBe(404);
  });

  it('delivers each event signed per Standard Webhooks, verified by its reference verifier, in the original envelope', async () => {
    const { api, webhook } = await subscriber(['project.created', 'player.created', 'player.updated']);
    const { data: player } = await api.POST('/players', { body: { name: 'Signed' } });
    await api.POST('/players/{playerid}', { params: { path: { playerid: player!.id } }, body: { name: 'Signed, renamed' } });
    const received = await receiver.waitFor(3);
    const verifier = new Webhook(webhook.secret);
    const events = received.map((request) => verifier.verify(request.body, headersOf(request)) as Event);
    expect(events.map((event) => event.type).sort()).toEqual(['player.created', 'player.updated', 'project.created']);
    const created = events.find((event) => event.type === 'player.created')!;
    expect(created).toMatchObject({ object: 'event', projectid: player!.projectid, boxid: null, boxName: null, commentid: null, data: { id: player!.id, name: 'Signed' } });
    expect(created.id).toMatch(/^evt_/);
    expect(events.find((event) => event.type === 'player.updated')!.data).toMatchObject({ name: 'Signed, renamed' });
    // A changed body, or another secret, fails verification.
    expect(() => verifier.verify(received[0].body.replace('Signed', 'Forged'), headersOf(received[0]))).toThrow();
    expect(() => new Webhook('whsec_' + Buffer.alloc(24, 7).toString('base64')).verify(received[0].body, headersOf(received[0]))).toThrow();
    const deliveries = await api.GET('/webhooks/{webhookid}/deliveries', { params: { path: { webhookid: webhook.id } } });
    expect(deliveries.data!.map((delivery) => delivery.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(deliveries.data![0].attempts).toEqual([expect.objectContaining({ attempt: 1, statusCode: 200, error: null })]);
    expect(new Set(received.map((request) => request.headers['webhook-id']))).toEqual(new Set(deliveries.data!.map((delivery) => delivery.id)));
  });

  it('rotates the secret with an overlap: for 24 hours each delivery verifies with the new secret and with the previous one', async () => {
    const { api, webhook } = await subscriber(['project.created']);
    const path = { params: { path: { webhookid: webhook.id } } };
    const rotated = await api.POST('/webhooks/{webhookid}/secret', path);
    expect(rotated.data!.secret).not.toBe(webhook.secret);
    expect(rotated.data!.previousSecretExpires).toBe((await api.GET('/webhooks/{webhookid}', path)).data!.secretRotated! + 24 * 3_600_000);
    await api.POST('/projects', { body: { name: 'Overlap' } });
    const [during] = await receiver.waitFor(1);
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [webhook.secret, rotated.data!.secret]) expect(() => new Webhook(secret).verify(during.body, headersOf(during))).not.toThrow();

    // The server's clock moves a day on; the receiver's does not, so its verifier would call the timestamp too new.
    // The one signature left is compared with what the new secret signs, which is what the verifier computes.
    t.server.clock.advance(24 * 3_600_000 + 1000);
    await api.POST('/projects', { body: { name: 'After the overlap' } });
    const after = (await receiver.waitFor(2))[1];
    expect(after.headers['webhook-signature']).toBe(signatureBy(rotated.data!.secret, after));
    expect(signatureBy(webhook.secret, after)).not.toBe(signatureBy(rotated.data!.secret, after));
  });

  it('sends comment, upload and file events with the file and comment they are about', async () => {
    const { api, webhook } = await subscriber(['upload.started', 'upload.completed', 'comment.created', 'comment.updated']);
    const { data: project } = await api.POST('/projects', { body: { name: 'Events' } });
    const upload = await api.uploadFile(project!.id, { name: 'notes.txt', mimeType: 'text/plain' }, new TextEncoder().encode('hello'));
    const fileid = upload.data!.box.id;
    const path = { projectid: project!.id, fileid };
    const { data: comment } = await api.POST('/projects/{projectid}/files/{fileid}/comments', { params: { path }, body: { message: 'Nice' } });
    await api.POST('/projects/{projectid}/files/{fileid}/comments/{commentid}', { params: { path: { ...path, commentid: comment!.id } }, body: { completed: true } });
    const events = (await receiver.waitFor(4)).map(eventOf);
    expect(events.map((event) => event.type).sort()).toEqual(['comment.created', 'comment.updated', 'upload.completed', 'upload.started']);
    for (const event of events) expect(event).toMatchObject({ projectid: project!.id, boxid: fileid, boxName: 'notes.txt' });
    expect(events.find((event) => event.type === 'upload.started')!.data).toMatchObject({ id: fileid, status: 'awaiting-upload' });
    expect(events.find((event) => event.type === 'upload.completed')!.data).toMatchObject({ id: fileid, status: 'ready' });
    expect(events.find((event) => event.type === 'comment.updated')).toMatchObject({ commentid: comment!.id, data: { completed: true, creator: { mine: true } } });
    expect(webhook.events).toHaveLength(4);
  });

  it('retries a failed attempt on the schedule, with the same webhook-id, and logs each attempt', async () => {
    const { api, webhook } = await subscriber(['project.created']);
    receiver.answers.push(503);
    await api.POST('/projects', { body: { name: 'Retried' } });
    await receiver.waitFor(1);
    const path = { params: { path: { webhookid: webhook.id } } };
    const pending = await until(async () => {
      const [delivery] = (await api.GET('/webhooks/{webhookid}/deliveries', path)).data!;
      return delivery && delivery.nextAttempt !== null ? delivery : undefined;
    }, 'the retry to be scheduled');
    expect(pending).toMatchObject({ status: 'pending', attempts: [expect.objectContaining({ statusCode: 503, error: expect.stringContaining('503') })] });
    expect(pending.nextAttempt! - pending.attempts[0].timeStarted).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[0]);
    t.server.clock.advance(RETRY_DELAYS_MS[0]);
    t.server.webhookWorker!.nudge();
    const [first, second] = await receiver.waitFor(2);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(second.body).toBe(first.body);
    expect(second.headers['webhook-signature']).toBe(signatureBy(webhook.secret, second));
    const [delivery] = (await until(async () => {
      const list = (await api.GET('/webhooks/{webhookid}/deliveries', path)).data!;
      return list[0]?.status === 'succeeded' && list;
    }, 'the retry to succeed'))!;
    expect(delivery.attempts.map((attempt) => attempt.statusCode)).toEqual([503, 200]);
  });

  it('disables an endpoint that failed every attempt for over 24 hours, says why, and sends it nothing more', async () => {
    const { api, webhook } = await subscriber(['project.created']);
    receiver.fallback = 500;
    await api.POST('/projects', { body: { name: 'Doomed' } });
    for (let attempt = 1; attempt <= RETRY_DELAYS_MS.length + 1; attempt++) {
      await receiver.waitFor(attempt);
      if (attempt <= RETRY_DELAYS_MS.length) {
        // The attempt is recorded, and the next one scheduled, before the clock moves on to it.
        await until(async () => (await t.server.ctx.store.webhooks.deliveriesOf(webhook.id, 0, 1))[0]?.attempts.length === attempt, `attempt ${attempt} to be logged`);
        t.server.clock.advance(RETRY_DELAYS_MS[attempt - 1]);
        t.server.webhookWorker!.nudge();
      }
    }
    const path = { params: { path: { webhookid: webhook.id } } };
    const disabled = await until(async () => {
      const { data } = await api.GET('/webhooks/{webhookid}', path);
      return !data!.enabled && data;
    }, 'the webhook to be disabled');
    expect(disabled!.disabledReason).toMatch(/Every attempt to deliver msg_\w+ failed, for 28 hours/);
    const [delivery] = (await api.GET('/webhooks/{webhookid}/deliveries', path)).data!;
    expect(delivery).toMatchObject({ status: 'failed', nextAttempt: null });
    expect(delivery.attempts).toHaveLength(8);
    expect(RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0)).toBeGreaterThan(24 * 3_600_000);

    // Disabled: a new event makes no delivery, and nothing arrives.
    const before = receiver.received.length;
    await api.POST('/projects', { body: { name: 'Unheard' } });
    await settled();
    expect(receiver.received.length).toBe(before);
    expect((await api.GET('/webhooks/{webhookid}/deliveries', path)).data).toHaveLength(1);

    // Turned on again by its owner: the reason goes, and redelivery sends the missed event with its first id.
    receiver.fallback = 200;
    const enabled = await api.POST('/webhooks/{webhookid}', { ...path, body: { enabled: true } });
    expect(enabled.data).toMatchObject({ enabled: true, disabledReason: null });
    const redelivered = await api.POST('/webhooks/{webhookid}/deliveries/{deliveryid}/redeliver', { params: { path: { webhookid: webhook.id, deliveryid: delivery.id } } });
    expect(redelivered.data).toMatchObject({ status: 'pending' });
    const requests = await receiver.waitFor(before + 1);
    expect(requests.at(-1)!.headers['webhook-id']).toBe(delivery.id);
  });

  it('disables at once an endpoint that answers 410 Gone', async () => {
    const { api, webhook } = await subscriber(['project.created']);
    receiver.answers.push(410);
    await api.POST('/projects', { body: { name: 'Gone' } });
    const { data } = await until(async () => {
      const answer = await api.GET('/webhooks/{webhookid}', { params: { path: { webhookid: webhook.id } } });
      return !answer.data!.enabled && answer;
    }, 'the webhook to be disabled');
    expect(data!.disabledReason).toContain('410 Gone');
    expect(receiver.received).toHaveLength(1);
  });

  it('never sends the event of a change that rolled back', async () => {
    const { api, webhook } = await subscriber(['project.created']);
    const user = (await t.server.ctx.store.webhooks.get(webhook.id))!.userId;
    await expect(
      t.server.ctx.store.transaction(async (store) => {
        await recordEvent(t.server.ctx, store, { type: 'project.created', ownerId: user, projectId: 'prj_rolledback', data: { name: 'rolled back' } });
        throw new Error('the change failed after its event was written');
      }),
    ).rejects.toThrow('the change failed');
    // A change that commits afterwards is delivered; by then the rolled-back one would have been too.
    const { data: project } = await api.POST('/projects', { body: { name: 'Committed' } });
    await receiver.waitFor(1);
    await settled();
    expect(receiver.received.map((request) => eventOf(request).projectid)).toEqual([project!.id]);
    expect((await api.GET('/webhooks/{webhookid}/deliveries', { params: { path: { webhookid: webhook.id } } })).data).toHaveLength(1);
  });

  it('refuses link-local and metadata URLs even where private ones are allowed, with a problem naming the url field', async () => {
    const { api } = await t.as('ssrf@example.com');
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]/hook', 'http://[::ffff:169.254.169.254]/']) {
      const { error, response } = await api.POST('/webhooks', { body: { url, events: ['player.created'] } });
      expect(response.status).toBe(400);
      expect(error).toMatchObject({ type: '/problems/validation-error', errors: [{ pointer: '#/url' }] });
      expect(error!.detail).toMatch(/link-local, metadata or reserved/);
    }
  });
  // Last: it replaces the server's sender with one of its own.
  it('cancels deliveries queued before the endpoint was disabled: a disabled endpoint gets nothing', async () => {
    const { api, webhook } = await subscriber(['project.created']);
    // No sender runs while the event is queued and the endpoint disabled.
    await t.server.webhookWorker!.stop(0);
    try {
      await api.POST('/projects', { body: { name: 'Queued, then cancelled' } });
      await api.POST('/webhooks/{webhookid}', { params: { path: { webhookid: webhook.id } }, body: { enabled: false } });
    } finally {
      // Stopped in afterAll, before the server: it is not the one the server stops.
      replacement = t.server.webhookWorker = startWebhookWorker(t.server.ctx);
    }
    await settled();
    const [delivery] = (await api.GET('/webhooks/{webhookid}/deliveries', { params: { path: { webhookid: webhook.id } } })).data!;
    expect(delivery.status).toBe('cancelled');
    expect(receiver.received).toEqual([]);
  });

});

describe('webhook URLs on a server that keeps private addresses out (the default)', () => {
  const t = useTestServer('sqlite');

  it('refuses loopback and private URLs, and names which address and why', async () => {
    const { api } = await t.as('private@example.com');
    for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'https://10.1.2.3/hook', 'http://[::1]/hook', 'http://100.100.100.200/latest']) {
      const { error, response } = await api.POST('/webhooks', { body: { url, events: ['player.created'] } });
      expect(response.status, url).toBe(400);
      expect(error!.detail).toMatch(/loopback or private address/);
    }
    const { response } = await api.POST('/webhooks', { body: { url: 'https://203.0.113.7/hook', events: ['player.created'] } });
    expect(response.status).toBe(200);
  });
});

describe('the outbound address rules', () => {
  it('refuse link-local, metadata and reserved addresses always, and loopback and private ones unless allowed', () => {
    // NAT64 and 6to4 addresses that carry the metadata address reach it through a translator or relay.
    for (const address of ['169.254.169.254', '169.254.0.1', 'fe80::1', 'fd00:ec2::254', '::ffff:169.254.169.254', '0.0.0.0', '224.0.0.1', '::', '64:ff9b::a9fe:a9fe', '64:ff9b::169.254.169.254', '2002:a9fe:a9fe::1']) {
      expect(refusalOf(address, true), address).toMatch(/link-local/);
    }
    // NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 (2002::/16), Teredo and IPv4-compatible addresses go through a translator or relay to an IPv4 address, whatever it is.
    for (const address of ['127.0.0.1', '::1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '100.100.100.200', 'fd12::1', '::ffff:127.0.0.1', '64:ff9b::7f00:1', '64:ff9b::a00:1', '64:ff9b::5db8:d822', '64:ff9b:1::a00:1', '2002:7f00:1::1', '2002:5db8:d822::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '::7f00:1']) {
      expect(refusalOf(address, false), address).toMatch(/private/);
      expect(refusalOf(address, true), address).toBeUndefined();
    }
    for (const address of ['93.184.216.34', '2606:4700::1111', '203.0.113.7']) expect(refusalOf(address, false), address).toBeUndefined();
  });

  it('the sender connects to no refused address, follows no redirect, and gives up at its deadline', async () => {
    const target = await startReceiver();
    try {
      const refused = await sendWebhook({ url: target.url, headers: {}, body: '{}', timeoutMs: 5000, allowPrivate: false });
      expect(refused).toMatchObject({ statusCode: null, error: expect.stringContaining('was not tried') });
      expect(target.received).toEqual([]);

      target.answers.push({ status: 302, headers: { Location: `${target.url}/elsewhere` } });
      const redirected = await sendWebhook({ url: target.url, headers: {}, body: '{}', timeoutMs: 5000, allowPrivate: true });
      expect(redirected).toMatchObject({ statusCode: 302, error: expect.stringContaining('Redirects are not followed') });
      expect(target.received.map((request) => request.path)).toEqual(['/hooks']);

      target.answers.push('hang');
      const slow = await sendWebhook({ url: target.url, headers: {}, body: '{}', timeoutMs: 300, allowPrivate: true });
      expect(slow).toMatchObject({ statusCode: null, error: expect.stringContaining('No complete answer within 0.3 seconds') });

      // The IP literal's check is kept with its URL, but as the setting it was made under: refused again without it.
      const before = target.received.length;
      const refusedAgain = await sendWebhook({ url: target.url, headers: {}, body: '{}', timeoutMs: 5000, allowPrivate: false });
      expect(refusedAgain).toMatchObject({ statusCode: null, error: expect.stringContaining('was not tried') });
      expect(target.received).toHaveLength(before);
    } finally {
      await target.close();
    }
  });
});

describe.each(backends)('analysis events on %s', (backend) => {
  const t = useTestServer(backend, { WEBHOOK_ALLOW_PRIVATE: 'true', PROCESSING: 'in-process', JOB_POLL_MS: '50' });
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  it('sends file.processed with the analysis of real audio, and file.processing_failed for bytes that are no audio', async () => {
    const { api } = await t.as('analysis@example.com');
    await api.POST('/webhooks', { body: { url: receiver.url, events: ['file.processed', 'file.processing_failed'] } });
    const { data: project } = await api.POST('/projects', { body: { name: 'Analysed' } });
    const good = await api.uploadFile(project!.id, { name: 'tone.wav', mimeType: 'audio/wav' }, await sineWav(1));
    const bad = await api.uploadFile(project!.id, { name: 'broken.wav', mimeType: 'audio/wav' }, new TextEncoder().encode('RIFF but not audio at all'));
    const events = (await receiver.waitFor(2, 60_000)).map(eventOf);
    const processed = events.find((event) => event.type === 'file.processed')!;
    expect(processed).toMatchObject({ boxid: good.data!.box.id, boxName: 'tone.wav', data: { status: 'ready', audio: { sampleRate: 48000 } } });
    expect((processed.data as unknown as { duration: number }).duration).toBeCloseTo(1, 1);
    expect(events.find((event) => event.type === 'file.processing_failed')).toMatchObject({ boxid: bad.data!.box.id, data: { status: 'failed' } });
  });
});
