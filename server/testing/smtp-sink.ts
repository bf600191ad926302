/**
 * A real SMTP server on loopback for the tests (`smtp-server`), that takes
 * mail as a mail provider would: it asks for AUTH with the credentials it
 * was given, parses every message it accepts (`mailparser`), and lets a
 * test wait for the next mail to an address, woken by the mail's arrival.
 * It can refuse mail (a 451 or a 550 to RCPT TO), and be stopped and
 * started again on the same port, as a provider that is down comes back.
 */
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { simpleParser, type AddressObject } from 'mailparser';
import type { AddressInfo } from 'node:net';

export interface ReceivedMail {
  /** The envelope's recipients (RCPT TO), lower-cased. */
  to: string[];
  /** The envelope's sender (MAIL FROM). */
  envelopeFrom: string;
  /** The From header, as written. */
  from: string;
  subject: string;
  text: string;
  html: string;
  /** The user the client authenticated as. */
  user: string | undefined;
}

export interface SmtpSink {
  /** smtp://user:password@127.0.0.1:port, for SMTP_URL. */
  readonly url: string;
  readonly port: number;
  /** Every mail accepted, in order. */
  readonly received: ReceivedMail[];
  /** What it answers RCPT TO with, from now on: accept, a transient refusal (451) or a permanent one (550). */
  refuse: 'no' | 'transient' | 'permanent';
  /** How many RCPT TO it refused. */
  readonly refusals: number;
  /**
   * The next mail to `address` not yet taken by an earlier call: one that
   * came already, or the first to come within `timeoutMs`.
   */
  nextTo(address: string, timeoutMs?: number): Promise<ReceivedMail>;
  /** Stops listening (the provider is down); `start` listens again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** The links in a mail's plain text, in order. */
export function linksIn(mail: Pick<ReceivedMail, 'text'>): string[] {
  return mail.text.match(/https?:\/\/[^\s<>"]+/g) ?? [];
}

/** The one link in the mail whose path is `path` (such as /reset-password), as a URL; fails if there is none. */
export function linkTo(mail: Pick<ReceivedMail, 'text'>, path: string): URL {
  const link = linksIn(mail)
    .map((candidate) => new URL(candidate))
    .find((url) => url.pathname.endsWith(path));
  if (!link) throw new Error(`The mail has no link to ${path}: ${linksIn(mail).join(', ') || 'no link at all'}`);
  return link;
}

const addressText = (value: AddressObject | AddressObject[] | undefined) => (Array.isArray(value) ? value.map((one) => one.text).join(', ') : (value?.text ?? ''));

export async function startSmtpSink(credentials: { user: string; password: string } = { user: 'mailer', password: 'sink-password' }): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  /** How many mails to each address earlier calls of nextTo took. */
  const taken = new Map<string, number>();
  const waiting = new Set<() => void>();
  let refusals = 0;
  let port = 0;
  let server: SMTPServer | undefined;

  const options: SMTPServerOptions = {
    // Loopback only, and no TLS: the mailer sends AUTH in clear to loopback (server/config.ts requires STARTTLS elsewhere).
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: false,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === credentials.user && auth.password === credentials.password) callback(null, { user: auth.username });
      else callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onRcptTo(_address, _session, callback) {
      if (sink.refuse === 'no') return callback();
      refusals++;
      callback(
        sink.refuse === 'transient'
          ? Object.assign(new Error('Mailbox busy, try again later'), { responseCode: 451 })
          : Object.assign(new Error('No such mailbox'), { responseCode: 550 }),
      );
    },
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (parsed) => {
          received.push({
            to: session.envelope.rcptTo.map((recipient) => recipient.address.toLowerCase()),
            envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            from: addressText(parsed.from),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: parsed.html || '',
            user: session.user as string | undefined,
          });
          callback();
          for (const wake of waiting) wake();
        },
        (error: Error) => callback(error),
      );
    },
  };

  const listen = async () => {
    server = new SMTPServer(options);
    // A connection the test cut (stop) is no failure of the sink.
    server.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      server!.server.once('error', reject);
      server!.listen(port, '127.0.0.1', () => resolve());
    });
    port = (server.server.address() as AddressInfo).port;
  };
  const unlisten = async () => {
    const closing = server;
    server = undefined;
    if (!closing) return;
    // close() waits for open connections; the client closes its own after each mail.
    await new Promise<void>((resolve) => closing.close(() => resolve()));
  };

  await listen();

  const sink: SmtpSink = {
    get url() {
      return `smtp://${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    received,
    refuse: 'no',
    get refusals() {
      return refusals;
    },
    nextTo(address, timeoutMs = 15_000) {
      const wanted = address.toLowerCase();
      const take = () => {
        const mine = received.filter((mail) => mail.to.includes(wanted));
        const index = taken.get(wanted) ?? 0;
        if (mine.length <= index) return undefined;
        taken.set(wanted, index + 1);
        return mine[index];
      };
      const now = take();
      if (now) return Promise.resolve(now);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(check);
          reject(new Error(`No mail to ${address} came within ${timeoutMs} ms (${received.length} mail(s) in all, ${refusals} refused)`));
        }, timeoutMs);
        const check = () => {
          const mail = take();
          if (!mail) return;
          clearTimeout(timer);
          waiting.delete(check);
          resolve(mail);
        };
        waiting.add(check);
      });
    },
    stop: unlisten,
    start: listen,
    close: unlisten,
  };
  return sink;
}
