/**
 * One POST to a subscriber's URL, made as an SSRF-safe client must: the
 * host is resolved, every address it resolves to is checked
 * (server/lib/outbound-addresses.ts), and the connection goes to the address
 * checked, so that DNS cannot answer differently in between. Redirects are
 * never followed (a 3xx is a failed attempt), the whole attempt has a short
 * deadline, and at most RESPONSE_BODY_CAP bytes of the answer are read.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveAllowed } from '../../lib/outbound-addresses.ts';

/** The most of an answer's body read: receivers should answer at once, with little. */
export const RESPONSE_BODY_CAP = 64 * 1024;
/** How much of a failed answer's body is kept in the attempt's error, for its owner to read. */
const BODY_EXCERPT = 200;

export interface SendOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
}

export interface SendOutcome {
  statusCode: number | null;
  /** Null when the endpoint answered 2xx. */
  error: string | null;
}

/** A lookup that answers the one address already checked, whatever it is asked. */
const pinnedLookup =
  (address: string, family: 4 | 6): LookupFunction =>
  (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as unknown as (error: null, addresses: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };

export async function sendWebhook(options: SendOptions): Promise<SendOutcome> {
  const url = new URL(options.url);
  const deadline = AbortSignal.timeout(options.timeoutMs);
  let pinned: { address: string; family: 4 | 6 };
  try {
    pinned = await resolveAllowed(url.hostname, options.allowPrivate, options.timeoutMs);
  } catch (error) {
    return { statusCode: null, error: `The URL was not tried: ${(error as Error).message}` };
  }
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    const settle = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const onTimeout = () => {
      settle({ statusCode: null, error: `No complete answer within ${options.timeoutMs / 1000} seconds.` });
      outgoing.destroy();
    };
    deadline.addEventListener('abort', onTimeout, { once: true });
    const outgoing = request(
      url,
      {
        method: 'POST',
        headers: { ...options.headers, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(options.body)), 'User-Agent': 'audio-share-webhooks/1' },
        lookup: pinnedLookup(pinned.address, pinned.family),
        // One connection per attempt: a kept-alive one could outlive the address check.
        agent: false,
      },
      (response: IncomingMessage) => {
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let read = 0;
        const finish = () => {
          deadline.removeEventListener('abort', onTimeout);
          if (status >= 200 && status < 300) return settle({ statusCode: status, error: null });
          const excerpt = Buffer.concat(chunks).toString('utf8').slice(0, BODY_EXCERPT).trim();
          const redirect = status >= 300 && status < 400 ? ' Redirects are not followed: give the final URL.' : '';
          settle({ statusCode: status, error: `The endpoint answered ${status}.${redirect}${excerpt ? ` Its answer began: ${excerpt}` : ''}` });
        };
        response.on('data', (chunk: Buffer) => {
          if (read < BODY_EXCERPT) chunks.push(chunk);
          read += chunk.length;
          // Past the cap the rest is not read: the status is what counts.
          if (read > RESPONSE_BODY_CAP) {
            finish();
            response.destroy();
          }
        });
        response.on('end', finish);
        response.on('error', () => finish());
      },
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      deadline.removeEventListener('abort', onTimeout);
      settle({ statusCode: null, error: `The request failed: ${error.code ?? error.message}.` });
    });
    outgoing.end(options.body);
  });
}
