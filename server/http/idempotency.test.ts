/**
 * Idempotency-Key on a real server, on SQLite and PostgreSQL: parallel
 * requests with one key make one resource, a retry gets the first answer
 * byte for byte, another request with the key is refused (422), a retry
 * while the first still runs is refused (409), keys are per account, a key
 * is forgotten after 24 hours (the injected clock), a claim left by a dead
 * process lapses, and a 5xx is not replayed.
 *
 * A request held "running" is a real one: POST /me/payment-provider waits on
 * Stripe, and its Stripe here is a gate in front of the fake
 * (server/testing/fake-stripe.ts) that holds a request until the test lets
 * it through, or refuses it.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Request } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../testing/databases.ts';
import { json, useTestServer } from '../testing/harness.ts';
import { FakeStripe } from '../testing/fake-stripe.ts';
import { specPath } from '../app.ts';
import { credentialOf, fingerprintOf, keyOf } from './idempotency.ts';
import { OPERATIONS } from '../../generated/operations.ts';
import { CLAIM_LEASE_MS, IdempotencyKeys, KEY_LIFETIME_MS } from './idempotency-keys.ts';

/** Stripe as the server sees it: the fake, behind a gate that can hold the next request, or refuse it. */
class StripeGate {
  private server: Server | undefined;
  private held: { arrived: () => void; release: Promise<void> } | undefined;
  private refusals = 0;
  private target = '';

  async start(target: string): Promise<string> {
    this.target = target;
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', async () => {
        if (this.refusals > 0) {
          this.refusals--;
          res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { type: 'invalid_request_error', message: 'Refused by the test.' } }));
          return;
        }
        const held = this.held;
        this.held = undefined;
        if (held) {
          held.arrived();
          await held.release;
        }
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)) as Array<[string, string]>);
        const answer = await fetch(this.target + req.url, { method: req.method, headers, body: req.method === 'GET' ? undefined : Buffer.concat(chunks) });
        res.writeHead(answer.status, { 'Content-Type': answer.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
      });
    });
    await new Promise<void>((ready) => this.server!.listen(0, '127.0.0.1', ready));
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  /** Holds the next request to Stripe: `arrived` settles when it comes, and it goes on when `release` is called. */
  holdNext(): { arrived: Promise<void>; release: () => void } {
    let arrived!: () => void;
    let release!: () => void;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    this.held = { arrived, release: new Promise<void>((resolve) => (release = resolve)) };
    return { arrived: arrival, release };
  }

  /** Refuses the next `count` requests with a 400 of Stripe's shape. */
  refuseNext(count: number) {
    this.refusals = count;
  }

  async stop() {
    this.server?.closeAllConnections();
    await new Promise<void>((done) => (this.server ? this.server.close(() => done()) : done()));
  }
}

/**
 * The POSTs a token may call that take no key, each with its reason. Any other such POST must list the
 * Idempotency-Key parameter: a new operation that creates or changes something is retried safely, or says why not.
 */
const TAKE_NO_KEY: Record<string, string> = {
  createProjectUpload: 'a tus creation: tus clients resume by the upload URL, and send no body to compare',
};

describe('which operations take Idempotency-Key', () => {
  it('is every POST a token may call, but those listed with their reason', () => {
    const spec = JSON.parse(readFileSync(specPath, 'utf8')) as { paths: Record<string, Record<string, { operationId: string; security?: Array<Record<string, string[]>> }>> };
    const tokenPosts = Object.values(spec.paths)
      .flatMap((item) => (item.post ? [item.post] : []))
      .filter((operation) => (operation.security ?? []).some((requirement) => 'bearerAuth' in requirement || 'oauth2' in requirement))
      .map((operation) => operation.operationId);
    const taking = new Set<string>(OPERATIONS.filter((operation) => operation.idempotencyKey).map((operation) => operation.id));
    expect(tokenPosts.length).toBeGreaterThan(20);
    expect(tokenPosts.filter((operationId) => !taking.has(operationId) && !(operationId in TAKE_NO_KEY)), 'POSTs a token may call that take no Idempotency-Key').toEqual([]);
    // Only POSTs: GET, PUT and DELETE are idempotent already. Besides a token's, the POSTs that take the session alone
    // and were a token's before (registering an app, issue 28) keep taking a key, for a browser's retries.
    const sessionPosts = OPERATIONS.filter((operation) => operation.method === 'POST' && operation.security.session && !operation.security.token).map((operation) => operation.id as string);
    expect([...taking].filter((operationId) => !tokenPosts.includes(operationId) && !sessionPosts.includes(operationId))).toEqual([]);
  });
});

describe.each(backends)('Idempotency-Key on %s', (backend) => {
  const stripe = new FakeStripe();
  const gate = new StripeGate();
  const env: Record<string, string> = { STRIPE_SECRET_KEY: 'sk_test_idempotency', STRIPE_WEBHOOK_SECRET: 'whsec_idempotency' };
  // Before the server starts (hooks run in order): its Stripe is the gate in front of the fake.
  beforeAll(async () => {
    env.STRIPE_API_BASE = await gate.start(await stripe.start());
  });
  const t = useTestServer(backend, env);
  afterAll(async () => {
    await gate.stop();
    await stripe.stop();
  });

  let counter = 0;
  const newKey = () => `"key-${backend}-${Date.now()}-${counter++}"`;
  const post = (path: string, body: unknown, token: string, key?: string, headers: Record<string, string> = {}) =>
    t.fetch(path, { ...json(body), token, headers: { 'Content-Type': 'application/json', ...(key ? { 'Idempotency-Key': key } : {}), ...headers } });
  const playersNamed = async (token: string, name: string) => {
    const response = await t.fetch('/players', { token });
    return ((await response.json()) as Array<{ id: string; name: string }>).filter((player) => player.name === name);
  };

  it('replays the first answer byte for byte, with Idempotent-Replayed, and makes one player', async () => {
    const { token } = await t.as(`replay-${backend}@example.com`);
    const key = newKey();
    const first = await post('/players', { name: 'Replayed', options: { downloads: false } }, token, key);
    const firstBody = Buffer.from(await first.arrayBuffer());
    expect(first.status, firstBody.toString()).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    const retry = await post('/players', { options: { downloads: false }, name: 'Replayed' }, token, key);
    const retryBody = Buffer.from(await retry.arrayBuffer());
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retryBody.equals(firstBody)).toBe(true);
    expect(retry.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(retry.headers.get('etag')).toBe(first.headers.get('etag'));
    // The retry is a request of its own: its id is new.
    expect(retry.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    expect(await playersNamed(token, 'Replayed')).toHaveLength(1);

    // The same key bare, without the structured-field quotes, is the same key.
    const bare = await post('/players', { name: 'Replayed', options: { downloads: false } }, token, keyOf(key));
    expect(bare.headers.get('idempotent-replayed')).toBe('true');
    expect(Buffer.from(await bare.arrayBuffer()).equals(firstBody)).toBe(true);
  });

  it('replays a refusal (4xx) as the outcome it was', async () => {
    const { token } = await t.as(`refusal-${backend}@example.com`);
    const key = newKey();
    const first = await post('/projects/prj_0000000000000000/folders', { name: 'Nowhere' }, token, key);
    expect(first.status).toBe(404);
    const firstBody = await first.text();
    const retry = await post('/projects/prj_0000000000000000/folders', { name: 'Nowhere' }, token, key);
    expect(retry.status).toBe(404);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.text()).toBe(firstBody);
  });

  it('makes one player of parallel requests with one key; the others get its answer or 409', async () => {
    const { token } = await t.as(`parallel-${backend}@example.com`);
    const key = newKey();
    const answers = await Promise.all(Array.from({ length: 8 }, () => post('/players', { name: 'Parallel' }, token, key)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.every((status) => status === 200 || status === 409), statuses.join()).toBe(true);
    const bodies = await Promise.all(answers.map((answer) => answer.text()));
    const created = bodies.filter((_, i) => statuses[i] === 200).map((body) => (JSON.parse(body) as { id: string }).id);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created).size).toBe(1);
    for (const [i, answer] of answers.entries()) {
      if (statuses[i] === 409) {
        expect(JSON.parse(bodies[i])).toMatchObject({ type: '/problems/idempotency-key-in-use', status: 409 });
        expect(answer.headers.get('retry-after')).toBe('1');
      }
    }
    expect(await playersNamed(token, 'Parallel')).toHaveLength(1);
    // Once the first has answered, a retry gets it.
    const retry = await post('/players', { name: 'Parallel' }, token, key);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(((await retry.json()) as { id: string }).id).toBe(created[0]);
  });

  it('refuses the key with another body, another operation or another If-Match (422), and does nothing', async () => {
    const { token } = await t.as(`reused-${backend}@example.com`);
    const key = newKey();
    const created = await post('/players', { name: 'Reused' }, token, key);
    expect(created.status).toBe(200);
    const version = created.headers.get('etag')!;
    const otherBody = await post('/players', { name: 'Reused, renamed' }, token, key);
    expect(otherBody.status).toBe(422);
    expect(otherBody.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await otherBody.json()).toMatchObject({ type: '/problems/idempotency-key-reused', status: 422, errors: [{ header: 'idempotency-key' }] });
    const otherOperation = await post('/projects', { name: 'Reused' }, token, key);
    expect(otherOperation.status).toBe(422);
    expect(((await otherOperation.json()) as { detail: string }).detail).toContain('createPlayer');
    expect(await playersNamed(token, 'Reused, renamed')).toHaveLength(0);

    const player = (await created.json()) as { id: string };
    const updateKey = newKey();
    const update = await post(`/players/${player.id}`, { name: 'Reused' }, token, updateKey, { 'If-Match': version });
    expect(update.status).toBe(200);
    const otherIfMatch = await post(`/players/${player.id}`, { name: 'Reused' }, token, updateKey, { 'If-Match': '*' });
    expect(otherIfMatch.status).toBe(422);
  });

  it('answers 409 to a retry while the first request still runs, then the first answer once it has one', async () => {
    const { token } = await t.as(`running-${backend}@example.com`);
    const key = newKey();
    const held = gate.holdNext();
    const first = post('/me/payment-provider', { provider: 'stripe' }, token, key);
    await held.arrived;

    const whileRunning = await post('/me/payment-provider', { provider: 'stripe' }, token, key);
    expect(whileRunning.status).toBe(409);
    expect(whileRunning.headers.get('retry-after')).toBe('1');
    expect(await whileRunning.json()).toMatchObject({ type: '/problems/idempotency-key-in-use', status: 409 });
    const accountsWhileRunning = stripe.calls('POST /v1/accounts').length;

    held.release();
    const answer = await first;
    const body = await answer.text();
    expect(answer.status, body).toBe(200);
    const retry = await post('/me/payment-provider', { provider: 'stripe' }, token, key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.text()).toBe(body);
    // One connected account was made, by the first request; neither the refused nor the replayed retry asked for one.
    expect(accountsWhileRunning).toBe(0);
    expect(stripe.calls('POST /v1/accounts')).toHaveLength(1);
  });

  it('does not replay a 5xx: the key is released, and a retry runs anew', async () => {
    const { token } = await t.as(`failed-${backend}@example.com`);
    const key = newKey();
    gate.refuseNext(1);
    const failed = await post('/me/payment-provider', { provider: 'stripe' }, token, key);
    expect(failed.status).toBe(502);
    const retry = await post('/me/payment-provider', { provider: 'stripe' }, token, key);
    const body = await retry.text();
    expect(retry.status, body).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    // The answer that was the request's outcome is the one kept.
    const again = await post('/me/payment-provider', { provider: 'stripe' }, token, key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.text()).toBe(body);
  });

  it('keeps keys per account: the same key from another account is another key', async () => {
    const alice = await t.as(`alice-${backend}@example.com`);
    const bob = await t.as(`bob-${backend}@example.com`);
    const key = newKey();
    const mine = await post('/players', { name: 'Per account' }, alice.token, key);
    const theirs = await post('/players', { name: 'Per account' }, bob.token, key);
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    const myPlayer = (await mine.json()) as { id: string };
    expect(((await theirs.json()) as { id: string }).id).not.toBe(myPlayer.id);
    const myRetry = await post('/players', { name: 'Per account' }, alice.token, key);
    expect(myRetry.headers.get('idempotent-replayed')).toBe('true');
    expect(((await myRetry.json()) as { id: string }).id).toBe(myPlayer.id);
    // Nor does another account's use of a key make it "used for another request".
    expect((await post('/players', { name: 'Bob only' }, bob.token, newKey())).status).toBe(200);
    const bobsOtherBody = await post('/projects', { name: 'Per account' }, bob.token, newKey());
    expect(bobsOtherBody.status).toBe(200);
    expect(await playersNamed(alice.token, 'Per account')).toHaveLength(1);
    expect(await playersNamed(bob.token, 'Per account')).toHaveLength(1);
  });

  it('forgets a key 24 hours after its first use (the injected clock)', async () => {
    const { token } = await t.as(`expiry-${backend}@example.com`);
    const key = newKey();
    const first = (await (await post('/players', { name: 'Expiring' }, token, key)).json()) as { id: string };
    t.server.clock.advance(KEY_LIFETIME_MS - 1000);
    const within = await post('/players', { name: 'Expiring' }, token, key);
    expect(within.headers.get('idempotent-replayed')).toBe('true');
    t.server.clock.advance(1000);
    const after = await post('/players', { name: 'Expiring, another body' }, token, key);
    expect(after.status).toBe(200);
    expect(after.headers.get('idempotent-replayed')).toBeNull();
    expect(((await after.json()) as { id: string }).id).not.toBe(first.id);
    // The expired row was swept (a sweep runs with the first key of each minute), or taken over: either way, one row.
    const rows = await t.server.ctx.store.db.query<{ n: number }>('SELECT COUNT(*) AS n FROM idempotency_keys WHERE idempotency_key = $1', [keyOf(key)]);
    expect(Number(rows[0].n)).toBe(1);
  });

  it('lets a retry take over a claim whose process died, once its lease has lapsed', async () => {
    const { token } = await t.as(`lapsed-${backend}@example.com`);
    const ctx = t.server.ctx;
    const user = await ctx.store.users.findOrCreate(`lapsed-${backend}@example.com`, Date.now());
    const key = newKey();
    const body = { name: 'Lapsed' };
    // What another process left when it died mid-request: a claim, never answered.
    const fingerprint = fingerprintOf({ method: 'POST', originalUrl: '/api/v1/players', body, get: () => undefined } as unknown as Request);
    // Under the key's owner as the middleware names it: this account, and this token.
    const owner = { userId: user.id, credential: credentialOf({ kind: 'token', tokenId: (await ctx.store.tokens.findHolder(token))!.tokenId, scopes: 'all', timeAuthenticated: 0 }) };
    const dead = await new IdempotencyKeys(ctx.store.db, ctx.secrets).claim(owner, keyOf(key), fingerprint, 'createPlayer', ctx.clock.now());
    expect(dead.kind).toBe('claimed');

    expect((await post('/players', body, token, key)).status).toBe(409);
    t.server.clock.advance(CLAIM_LEASE_MS + 1);
    // Another request still cannot have the key: only a retry of the same one takes a lapsed claim over.
    expect((await post('/players', { name: 'Lapsed, another body' }, token, key)).status).toBe(422);
    const retry = await post('/players', body, token, key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await playersNamed(token, 'Lapsed')).toHaveLength(1);
  });

  it('refuses a key where it cannot be kept: without an account, on an operation that takes none, or malformed', async () => {
    const { token } = await t.as(`refused-${backend}@example.com`);
    // A listener's play report carries no account.
    const anonymous = await t.fetch('/players/ply_0000000000000000/plays', { ...json({ playid: '6f1c2a9d-4b7e-4c1a-9e2f-8d3b5a7c0e41', fileid: 'box_0000000000000000', heard: 1, position: 1 }), headers: { 'Content-Type': 'application/json', 'Idempotency-Key': newKey() } });
    expect(anonymous.status).toBe(400);
    expect(await anonymous.json()).toMatchObject({ type: '/problems/validation-error', errors: [{ header: 'idempotency-key' }] });
    // Signing in takes no key.
    const signIn = await t.fetch('/auth/signin', { ...json({ email: 'nobody@example.com', password: 'not the password at all' }), headers: { 'Content-Type': 'application/json', 'Idempotency-Key': newKey() } });
    expect(signIn.status).toBe(400);
    expect(await signIn.json()).toMatchObject({ errors: [{ header: 'idempotency-key' }] });
    for (const malformed of ['"unterminated', 'has space', `"${'k'.repeat(256)}"`, '"back\\slash"']) {
      const response = await post('/players', { name: 'Malformed key' }, token, malformed);
      expect(response.status, malformed).toBe(400);
    }
    expect(await playersNamed(token, 'Malformed key')).toHaveLength(0);
    // GET is idempotent by itself: a key there is ignored.
    expect((await t.fetch('/players', { token, headers: { 'Idempotency-Key': newKey() } })).status).toBe(200);
  });
});
