/**
 * One POST to a subscriber's URL, made as an SSRF-safe client must: the
 * host is resolved, every address it resolves to is checked
 * (server/lib/outbound-addresses.ts), and the connection goes to the address
 * checked, so that DNS cannot answer differently in between. Redirects are
 * never followed (a 3xx is a failed attempt), the whole attempt has a short
 * deadline, and at most RESPONSE_BODY_CAP bytes of the answer are read.
 *
 * Connections are kept alive, but only to the address checked: each checked
 * address has an agent of its own, whose every socket was opened to that
 * address (its lookup answers nothing else). An attempt whose check answers
 * another address takes another agent, so a kept-alive connection never
 * outlives the check that allowed it.
 */
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { urlToHttpOptions } from 'node:url';
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

/**
 * How long an idle kept-alive connection is kept: under the 5 seconds that
 * Node's and many other servers keep theirs, so that we close it first
 * rather than send on a socket the endpoint is closing. (A server that says
 * `Keep-Alive: timeout=N` is believed, less a second, by Node's agent.)
 */
export const IDLE_CONNECTION_MS = 4000;
/** Idle connections kept per checked address and port: as many as deliveries made at once, and no more. */
const IDLE_CONNECTIONS_PER_ADDRESS = 16;
/** Past this many agents, those with no connection left are dropped when another is made. */
const AGENTS_KEPT = 256;

type Pinned = { address: string; family: 4 | 6 };
const agents = new Map<string, HttpAgent>();

/** The agent whose every connection goes to `pinned`, the address just checked. */
function agentFor(protocol: string, pinned: Pinned): HttpAgent {
  const key = `${protocol}//${pinned.address}`;
  let agent = agents.get(key);
  if (agent) return agent;
  if (agents.size >= AGENTS_KEPT) {
    for (const [otherKey, other] of agents) {
      const inUse = Object.keys(other.sockets).length + Object.keys(other.freeSockets).length + Object.keys(other.requests).length;
      if (inUse === 0) agents.delete(otherKey);
    }
  }
  const options = { keepAlive: true, timeout: IDLE_CONNECTION_MS, maxFreeSockets: IDLE_CONNECTIONS_PER_ADDRESS, lookup: pinnedLookup(pinned.address, pinned.family) };
  agent = protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
  agents.set(key, agent);
  return agent;
}

/** What a delivery URL is to a request: its parts as node:http takes them, and, for an IP literal, the address checked. */
interface Target {
  url: URL;
  options: ReturnType<typeof urlToHttpOptions>;
  /** The IP literal's check, by whether private addresses were allowed: it depends on nothing else, so it is made once. */
  literal: Map<boolean, Pinned>;
}

/** How many URLs' parts are kept: more than the subscriptions one server sends to at once. */
const TARGETS_KEPT = 1000;
const targets = new Map<string, Target>();

/**
 * The URL parsed once, not once per attempt (a subscription gets hundreds a
 * second). What is kept is a function of the URL's text alone, so it is
 * never stale: a changed URL is another text. A host name is resolved and
 * checked on every attempt all the same; only an IP literal's check, which
 * no DNS answer can change, is kept with it.
 */
function targetOf(text: string): Target {
  let target = targets.get(text);
  if (target) return target;
  // Full: the oldest goes (a Map iterates in insertion order).
  if (targets.size >= TARGETS_KEPT) targets.delete(targets.keys().next().value!);
  const url = new URL(text);
  target = { url, options: urlToHttpOptions(url), literal: new Map() };
  targets.set(text, target);
  return target;
}

/** The address to connect to, checked (server/lib/outbound-addresses.ts): resolved each time for a host name, once for an IP literal. */
async function checkedAddress(target: Target, allowPrivate: boolean, timeoutMs: number): Promise<Pinned> {
  const kept = target.literal.get(allowPrivate);
  if (kept) return kept;
  const pinned = await resolveAllowed(target.url.hostname, allowPrivate, timeoutMs);
  if (isIP(target.url.hostname.replace(/^\[|\]$/g, ''))) target.literal.set(allowPrivate, pinned);
  return pinned;
}

/** Errors of a kept-alive connection the endpoint closed as we reused it: the request never reached it. */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE']);

export async function sendWebhook(options: SendOptions): Promise<SendOutcome> {
  const target = targetOf(options.url);
  const deadline = new Deadline(options.timeoutMs);
  let pinned: Pinned;
  try {
    pinned = await checkedAddress(target, options.allowPrivate, options.timeoutMs);
  } catch (error) {
    deadline.clear();
    return { statusCode: null, error: `The URL was not tried: ${(error as Error).message}` };
  }
  try {
    const outcome = await attempt(target, options, pinned, deadline, agentFor(target.url.protocol, pinned));
    if (outcome !== STALE) return outcome;
    // Node's documented remedy for a kept-alive socket the server closed meanwhile (request.reusedSocket): send again, once, on a new connection.
    const again = deadline.passed ? STALE : await attempt(target, options, pinned, deadline, false);
    return again === STALE ? { statusCode: null, error: 'The request failed: ECONNRESET.' } : again;
  } finally {
    deadline.clear();
  }
}

/**
 * The attempt's deadline: one timer, and one callback at a time (the
 * request under way). Lighter than AbortSignal.timeout, whose signal each
 * attempt would register with a FinalizationRegistry.
 */
class Deadline {
  passed = false;
  private onPassed: (() => void) | undefined;
  private timer: NodeJS.Timeout;

  constructor(ms: number) {
    this.timer = setTimeout(() => {
      this.passed = true;
      this.onPassed?.();
    }, ms);
  }

  /** Calls `callback` when the deadline passes, instead of the one before; undefined for none. */
  onPass(callback: (() => void) | undefined): void {
    this.onPassed = callback;
  }

  clear(): void {
    clearTimeout(this.timer);
    this.onPassed = undefined;
  }
}

/** The outcome of a request sent on a reused connection that the endpoint had closed, before any answer. */
const STALE = Symbol('stale connection');

function attempt(target: Target, options: SendOptions, pinned: Pinned, deadline: Deadline, agent: HttpAgent | false): Promise<SendOutcome | typeof STALE> {
  const request = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<SendOutcome | typeof STALE>((resolve) => {
    let settled = false;
    const settle = (outcome: SendOutcome | typeof STALE) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const onTimeout = () => {
      settle({ statusCode: null, error: `No complete answer within ${options.timeoutMs / 1000} seconds.` });
      outgoing.destroy();
    };
    deadline.onPass(onTimeout);
    let answered = false;
    const outgoing: ClientRequest = request(
      {
        // The URL's parts as request(url, options) would take them from it, taken once (targetOf).
        ...target.options,
        method: 'POST',
        headers: { ...options.headers, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(options.body)), 'User-Agent': 'audio-share-webhooks/1' },
        lookup: pinnedLookup(pinned.address, pinned.family),
        agent,
      },
      (response: IncomingMessage) => {
        answered = true;
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let read = 0;
        const finish = () => {
          deadline.onPass(undefined);
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
      deadline.onPass(undefined);
      if (outgoing.reusedSocket && !answered && STALE_CONNECTION.has(error.code ?? '')) return settle(STALE);
      settle({ statusCode: null, error: `The request failed: ${error.code ?? error.message}.` });
    });
    outgoing.end(options.body);
  });
}
