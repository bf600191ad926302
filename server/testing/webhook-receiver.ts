/**
 * A webhook receiver on loopback, for the tests and the bench: it records
 * every request (headers and raw body) and answers as the test says, by
 * default 200. `hang` holds a request without answering, as a stuck
 * endpoint does.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { until } from './until.ts';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Answer = number | 'hang' | { status: number; headers?: Record<string, string> };

export interface Receiver {
  url: string;
  received: Received[];
  /** Answers for the next requests, in order; after them, `fallback`. */
  answers: Answer[];
  fallback: Answer;
  /** Called with each request as it arrives. */
  onRequest?: (request: Received) => void;
  /** Waits until `count` requests have arrived (within `timeoutMs`) and answers them. */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const hanging: ServerResponse[] = [];
  const receiver: Receiver = {
    url: '',
    received: [],
    answers: [],
    fallback: 200,
    waitFor: (count, timeoutMs = 15_000) => until(() => receiver.received.length >= count && receiver.received, `${count} webhook request(s)`, timeoutMs),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      receiver.received.push(request);
      receiver.onRequest?.(request);
      const answer = receiver.answers.shift() ?? receiver.fallback;
      if (answer === 'hang') {
        hanging.push(res);
        return;
      }
      const { status, headers = {} } = typeof answer === 'number' ? { status: answer } : answer;
      res.writeHead(status, { 'Content-Type': 'text/plain', ...headers }).end(status < 300 ? 'ok' : `answer ${status}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}
