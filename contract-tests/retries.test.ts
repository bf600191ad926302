/**
 * Safe retries, as a partner meets them: Idempotency-Key on the POSTs that
 * take it, its replays and refusals. The mock keeps no state: it takes and
 * checks the header, and shows the documented 409 and 422 on `Prefer`; the
 * replays need a server. (The RateLimit fields are the server's tests':
 * the contract suite's servers run without rate limits, and so does the
 * mock.)
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { onMock, raw } from './support/context.ts';

const createPlayer = (body: unknown, key?: string, headers: Record<string, string> = {}) =>
  raw('/players', { method: 'POST', headers: { 'Content-Type': 'application/json', ...(key ? { 'Idempotency-Key': key } : {}), ...headers }, body: JSON.stringify(body) });

describe('Idempotency-Key', () => {
  it('createPlayer takes a key: a structured-field string, or the same characters bare', async () => {
    const quoted = await createPlayer({ name: 'Contract: keyed player' }, `"${randomUUID()}"`);
    expect(quoted.status).toBe(200);
    expect(quoted.headers.get('idempotent-replayed')).toBeNull();
    expect((await createPlayer({ name: 'Contract: keyed player' }, randomUUID())).status).toBe(200);
  });

  it('createPlayer refuses a malformed key with 400, naming the header', async () => {
    for (const key of ['"unterminated', 'with space', `"${'k'.repeat(256)}"`]) {
      const response = await createPlayer({ name: 'Contract: malformed key' }, key);
      expect(response.status, key).toBe(400);
      expect(await response.json()).toMatchObject({ type: '/problems/validation-error', errors: [{ header: 'idempotency-key' }] });
    }
  });

  it.skipIf(onMock)('a retry with the key gets the first answer byte for byte, marked Idempotent-Replayed (needs stored state: skipped on the mock)', async () => {
    const key = `"${randomUUID()}"`;
    const first = await createPlayer({ name: 'Contract: retried player' }, key);
    const firstBody = await first.text();
    expect(first.status).toBe(200);
    const retry = await createPlayer({ name: 'Contract: retried player' }, key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.text()).toBe(firstBody);
    expect(retry.headers.get('etag')).toBe(first.headers.get('etag'));
  });

  it.skipIf(onMock)('the key with another body is refused with 422, and nothing is made (needs stored state: skipped on the mock)', async () => {
    const key = `"${randomUUID()}"`;
    expect((await createPlayer({ name: 'Contract: first body' }, key)).status).toBe(200);
    const reused = await createPlayer({ name: 'Contract: another body' }, key);
    expect(reused.status).toBe(422);
    expect(await reused.json()).toMatchObject({ type: '/problems/idempotency-key-reused', status: 422 });
    const players = (await (await raw('/players')).json()) as Array<{ name: string }>;
    expect(players.filter((player) => player.name === 'Contract: another body')).toHaveLength(0);
  });

  it.runIf(onMock)('the mock shows the documented 409 (a retry while the first still runs) and 422 (the key reused) on Prefer', async () => {
    const inUse = await createPlayer({ name: 'x' }, `"${randomUUID()}"`, { Prefer: 'example=idempotencyKeyInUse, code=409' });
    expect(inUse.status).toBe(409);
    expect(await inUse.json()).toMatchObject({ type: '/problems/idempotency-key-in-use' });
    const reused = await createPlayer({ name: 'x' }, `"${randomUUID()}"`, { Prefer: 'code=422' });
    expect(reused.status).toBe(422);
    expect(await reused.json()).toMatchObject({ type: '/problems/idempotency-key-reused' });
  });
});
