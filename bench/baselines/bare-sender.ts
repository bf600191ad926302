/**
 * Baseline for webhook deliveries: what Node's own HTTP client does on one core with no database. It POSTs
 * BENCH_BODY to BENCH_URL BENCH_COUNT times, BENCH_CONCURRENCY at a time, through one kept-alive agent, each with a
 * Standard Webhooks signature (HMAC-SHA256 over id, timestamp and body) as the server's deliveries carry, and prints
 * the rate from the first answer to the last. The server's worker does this and more (claims, the delivery log, the
 * SSRF check); this is the ceiling of its rate (issue 23).
 */
import { createHmac, randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';

const url = new URL(process.env.BENCH_URL!);
const body = process.env.BENCH_BODY!;
const count = Number(process.env.BENCH_COUNT);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
const key = Buffer.from('a bench signing key of 32 bytes!');
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });

function deliver(): Promise<void> {
  const id = `msg_${randomUUID()}`;
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return new Promise((done, fail) => {
    const req = request(
      {
        host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${signature}` },
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode! < 300 ? done() : fail(new Error(`answer ${res.statusCode}`))));
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

let sent = 0;
let firstAnswer = 0;
async function lane(): Promise<void> {
  while (sent < count) {
    sent++;
    await deliver();
    firstAnswer ||= performance.now();
  }
}
await Promise.all(Array.from({ length: concurrency }, lane));
const seconds = (performance.now() - firstAnswer) / 1000;
console.log(JSON.stringify({ perSecond: (count - 1) / seconds }));
agent.destroy();
