/**
 * A fake of the few Stripe API endpoints the adapter calls, on loopback, for
 * the tests: the real SDK talks to it (STRIPE_API_BASE, the SDK's host,
 * port and protocol options), so what is tested is the requests the SDK
 * really makes. It keeps accounts and checkout sessions in memory, records
 * every request, answers Stripe's error shape, and serves a stand-in payment
 * page at each session's `url`. `paid()` marks a session paid and gives the
 * checkout.session.completed event Stripe would send; sign it with
 * `signedDelivery()`.
 *
 * Endpoints: POST /v1/accounts, POST /v1/account_links, GET
 * /v1/accounts/:id, POST /v1/checkout/sessions, GET
 * /v1/checkout/sessions/:id (with expand[]=payment_intent.latest_charge).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';

export interface RecordedRequest {
  method: string;
  path: string;
  /** The form body (or the query of a GET), flat, as the SDK encoded it: `line_items[0][price_data][unit_amount]`. */
  params: Record<string, string>;
  headers: IncomingMessage['headers'];
}

interface FakeAccount {
  id: string;
  email: string | null;
  charges_enabled: boolean;
  details_submitted: boolean;
  metadata: Record<string, string>;
}

interface FakeSession {
  id: string;
  url: string;
  amount_total: number;
  currency: string;
  metadata: Record<string, string>;
  payment_status: 'paid' | 'unpaid';
  status: 'open' | 'complete';
  expires_at: number;
  success_url: string;
  cancel_url: string;
  destination: string;
}

const token = () => randomBytes(9).toString('base64url').replace(/[-_]/g, 'x');

/** The keys of a bracketed group, such as metadata[...], as an object. */
function group(params: Record<string, string>, name: string): Record<string, string> {
  const prefix = `${name}[`;
  return Object.fromEntries(Object.entries(params).filter(([key]) => key.startsWith(prefix)).map(([key, value]) => [key.slice(prefix.length, -1), value]));
}

export class FakeStripe {
  readonly requests: RecordedRequest[] = [];
  readonly accounts = new Map<string, FakeAccount>();
  readonly sessions = new Map<string, FakeSession>();
  private server: Server | undefined;
  base = '';

  /** `chargesEnabled`: accounts made here can take payments at once, as if their owners had finished onboarding. */
  private readonly options: { chargesEnabled?: boolean };

  constructor(options: { chargesEnabled?: boolean } = {}) {
    this.options = options;
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', this.base);
        const body = Buffer.concat(chunks).toString('utf8');
        const params = Object.fromEntries(new URLSearchParams(req.method === 'GET' ? url.search : body));
        this.requests.push({ method: req.method ?? '', path: url.pathname, params, headers: req.headers });
        const [status, answer, type] = this.route(req.method ?? '', url.pathname, params, req.headers.authorization);
        res.writeHead(status, { 'Content-Type': type ?? 'application/json', 'Request-Id': `req_${token()}` });
        res.end(typeof answer === 'string' ? answer : JSON.stringify(answer));
      });
    });
    await new Promise<void>((ready) => this.server!.listen(0, '127.0.0.1', ready));
    this.base = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this.base;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((done) => (this.server ? this.server.close(() => done()) : done()));
  }

  /** The requests to one endpoint, such as 'POST /v1/checkout/sessions'. */
  calls(endpoint: string): RecordedRequest[] {
    return this.requests.filter((request) => `${request.method} ${request.path}` === endpoint);
  }

  /** Marks the session paid, as a completed payment would, and answers the checkout.session.completed event Stripe sends then. */
  paid(sessionId: string): string {
    const session = this.sessions.get(sessionId)!;
    session.payment_status = 'paid';
    session.status = 'complete';
    return JSON.stringify({
      id: `evt_${token()}`,
      object: 'event',
      api_version: '2025-02-24.acacia',
      type: 'checkout.session.completed',
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      data: { object: this.sessionJson(session, false) },
    });
  }

  private route(method: string, path: string, params: Record<string, string>, authorization: string | undefined): [number, unknown, string?] {
    if (!authorization?.startsWith('Bearer sk_test_')) return [401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } }];
    let match: RegExpExecArray | null;
    if (method === 'POST' && path === '/v1/accounts') {
      const account: FakeAccount = { id: `acct_${token()}`, email: params.email ?? null, charges_enabled: this.options.chargesEnabled ?? false, details_submitted: this.options.chargesEnabled ?? false, metadata: group(params, 'metadata') };
      this.accounts.set(account.id, account);
      return [200, this.accountJson(account)];
    }
    if (method === 'GET' && (match = /^\/v1\/accounts\/([^/]+)$/.exec(path))) {
      const account = this.accounts.get(match[1]);
      return account ? [200, this.accountJson(account)] : [404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such account: '${match[1]}'` } }];
    }
    if (method === 'POST' && path === '/v1/account_links') {
      if (!this.accounts.has(params.account)) return [400, { error: { type: 'invalid_request_error', message: `No such account: '${params.account}'` } }];
      return [200, { object: 'account_link', created: Math.floor(Date.now() / 1000), expires_at: Math.floor(Date.now() / 1000) + 300, url: `${this.base}/setup/${params.account}/${token()}` }];
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      const destination = params['payment_intent_data[transfer_data][destination]'];
      const account = this.accounts.get(destination);
      // As Stripe: a destination that cannot take charges is refused.
      if (!account?.charges_enabled) {
        return [400, { error: { type: 'invalid_request_error', message: `The destination account ${destination} needs the card_payments or transfers capability enabled.` } }];
      }
      const id = `cs_test_${token()}`;
      const session: FakeSession = {
        id,
        url: `${this.base}/c/pay/${id}`,
        amount_total: Number(params['line_items[0][price_data][unit_amount]']) * Number(params['line_items[0][quantity]']),
        currency: params['line_items[0][price_data][currency]'],
        metadata: group(params, 'metadata'),
        payment_status: 'unpaid',
        status: 'open',
        expires_at: Number(params.expires_at),
        success_url: params.success_url,
        cancel_url: params.cancel_url,
        destination,
      };
      this.sessions.set(id, session);
      return [200, this.sessionJson(session, false)];
    }
    if (method === 'GET' && (match = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path))) {
      const session = this.sessions.get(match[1]);
      if (!session) return [404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such checkout.session: '${match[1]}'` } }];
      return [200, this.sessionJson(session, params['expand[0]'] === 'payment_intent.latest_charge')];
    }
    if (method === 'GET' && (match = /^\/c\/pay\/([^/]+)$/.exec(path))) {
      const session = this.sessions.get(match[1]);
      return session ? [200, `<!doctype html><title>Fake checkout</title><h1>Pay ${session.amount_total} ${session.currency}</h1>`, 'text/html'] : [404, 'no such page', 'text/plain'];
    }
    return [404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path})` } }];
  }

  private accountJson(account: FakeAccount) {
    return { object: 'account', type: 'express', ...account };
  }

  private sessionJson(session: FakeSession, expand: boolean) {
    const charge = { id: `ch_${session.id.slice(8)}`, object: 'charge', receipt_url: `https://pay.stripe.com/receipts/${session.id.slice(8)}` };
    const intent = session.payment_status === 'paid' ? (expand ? { id: `pi_${session.id.slice(8)}`, object: 'payment_intent', latest_charge: charge } : `pi_${session.id.slice(8)}`) : null;
    return {
      id: session.id,
      object: 'checkout.session',
      mode: 'payment',
      url: session.status === 'open' ? session.url : null,
      amount_total: session.amount_total,
      currency: session.currency,
      metadata: session.metadata,
      payment_status: session.payment_status,
      status: session.status,
      expires_at: session.expires_at,
      success_url: session.success_url,
      cancel_url: session.cancel_url,
      payment_intent: intent,
    };
  }
}

/** Headers of a webhook delivery of `payload`, signed as Stripe signs them (the SDK's own test helper). */
export function signedDelivery(payload: string, secret: string): Record<string, string> {
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret });
  return { 'Content-Type': 'application/json; charset=utf-8', 'Stripe-Signature': signature };
}
