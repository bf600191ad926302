/**
 * The sender's kept-alive connections and its signatures: a connection is
 * reused only for the address the URL's check answered, and the signature
 * made with a kept opened key is the one the reference library makes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Webhook } from 'standardwebhooks';

// The name's answer is the test's to give: it stands for DNS answering differently between two deliveries.
const resolved = vi.hoisted(() => ({ address: '127.0.0.1' }));
vi.mock('../../lib/outbound-addresses.ts', async (original) => ({
  ...(await original<typeof import('../../lib/outbound-addresses.ts')>()),
  resolveAllowed: async () => ({ address: resolved.address, family: 4 as const }),
}));

const { sendWebhook } = await import('./webhook-sender.ts');
const { signatureHeader } = await import('./webhook-delivery.ts');
const { SecretBox } = await import('../../signing/secret-box.ts');

describe('the webhook sender', () => {
  let server: Server;
  let port: number;
  const seen: Array<{ local: string; remotePort: number }> = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ local: req.socket.localAddress!, remotePort: req.socket.remotePort! });
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    // Every loopback address: the name may resolve to 127.0.0.1 or to 127.0.0.2.
    await new Promise<void>((done) => server.listen(0, '0.0.0.0', done));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  });

  it('keeps a connection alive only to the address checked: another answer gets a connection of its own', async () => {
    const send = async (address: string) => {
      resolved.address = address;
      const outcome = await sendWebhook({ url: `http://hooks.test:${port}/in`, headers: {}, body: '{}', timeoutMs: 5000, allowPrivate: true });
      expect(outcome).toEqual({ statusCode: 200, error: null });
      return seen.at(-1)!;
    };
    const first = await send('127.0.0.1');
    const again = await send('127.0.0.1');
    expect(first.local).toBe('127.0.0.1');
    // Kept alive: the second delivery to the same checked address came on the same connection.
    expect(again).toEqual(first);
    // The name now answers another address: the delivery goes there, on a new connection, not on the kept one.
    const moved = await send('127.0.0.2');
    expect(moved.local).toBe('127.0.0.2');
    expect(moved.remotePort).not.toBe(first.remotePort);
    expect(seen).toHaveLength(3);
  });

  it('signs as the Standard Webhooks reference does, with the current secret and, during the overlap, the previous one', () => {
    const box = new SecretBox(Buffer.alloc(32, 9));
    const current = 'whsec_' + Buffer.alloc(32, 1).toString('base64');
    const previous = 'whsec_' + Buffer.alloc(24, 2).toString('base64');
    const at = new Date(1_700_000_000_500);
    const body = JSON.stringify({ type: 'project.created', name: 'Grüße, 音楽' });
    const webhook = { sealedSecret: box.seal(current), sealedPreviousSecret: box.seal(previous), previousSecretExpires: at.getTime() + 1 };
    const reference = (secret: string) => new Webhook(secret).sign('msg_1', at, body);
    // Twice: the second is made with the key kept from the first.
    for (let i = 0; i < 2; i++) {
      expect(signatureHeader(box, webhook as never, 'msg_1', at, body)).toBe(`${reference(current)} ${reference(previous)}`);
    }
    // Past the overlap, the previous secret signs no more.
    expect(signatureHeader(box, { ...webhook, previousSecretExpires: at.getTime() } as never, 'msg_1', at, body)).toBe(reference(current));
  });
});
