/**
 * A server killed (SIGKILL) in the middle of a delivery: its endpoint has
 * the request but has not answered. The job's lease runs out, the next
 * server takes the job up, and the endpoint gets the event again, with the
 * same webhook-id and body, so it can tell it is the same one.
 */
import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { backends, createTestDatabase } from '../../testing/databases.ts';
import { childServerSetup, startServer } from '../../testing/child-server.ts';
import { until } from '../../testing/until.ts';
import { startReceiver } from '../../testing/webhook-receiver.ts';

describe.each(backends)('a server killed mid-delivery, on %s', (backend) => {
  it('delivers the event after a restart, with the same webhook-id', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase(backend);
    const receiver = await startReceiver();
    const running: Array<{ child: ChildProcess; exited: Promise<unknown> }> = [];
    try {
      const { token, port, env } = await childServerSetup(database, 'killed@example.com', {
        WEBHOOK_ALLOW_PRIVATE: 'true',
        // The endpoint holds the first request far longer than the lease: only the kill ends that attempt.
        WEBHOOK_TIMEOUT_MS: '60000',
        JOB_LEASE_SECONDS: '2',
        JOB_POLL_MS: '50',
      });
      const call = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`http://127.0.0.1:${port}/api/v1${path}`, {
          method,
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        expect(response.status, await response.clone().text()).toBe(200);
        return response.json();
      };

      running.push(await startServer(env));
      const webhook = await call('POST', '/webhooks', { url: receiver.url, events: ['project.created'] });
      receiver.answers.push('hang');
      const project = await call('POST', '/projects', { name: 'Killed mid-delivery' });
      const [first] = await receiver.waitFor(1);
      running[0].child.kill('SIGKILL');
      await running[0].exited;

      running.push(await startServer(env));
      const [, second] = await receiver.waitFor(2, 30_000);
      expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
      expect(second.body).toBe(first.body);
      const event = new Webhook(webhook.secret).verify(second.body, {
        'webhook-id': String(second.headers['webhook-id']),
        'webhook-timestamp': String(second.headers['webhook-timestamp']),
        'webhook-signature': String(second.headers['webhook-signature']),
      }) as { type: string; projectid: string };
      expect(event).toMatchObject({ type: 'project.created', projectid: project.id });
      const deliveries = await until(async () => {
        const list = await call('GET', `/webhooks/${webhook.id}/deliveries`);
        return list[0]?.status === 'succeeded' && list;
      }, 'the delivery to be logged as succeeded');
      expect(deliveries).toHaveLength(1);
      // At least once, not exactly twice: on a loaded machine the restarted server's event loop may stall past its own
      // lease, and the event goes out again, as it must. Every copy is the same event, under the same webhook-id.
      expect(receiver.received.length).toBeGreaterThanOrEqual(2);
      for (const copy of receiver.received) {
        expect(copy.headers['webhook-id']).toBe(first.headers['webhook-id']);
        expect(copy.body).toBe(first.body);
      }
    } finally {
      for (const server of running) {
        server.child.kill('SIGKILL');
        await server.exited;
      }
      await receiver.close();
      await database.drop();
    }
  });
});
