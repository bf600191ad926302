/**
 * The mail port over SMTP, with nodemailer: a transport made once from the
 * settings (SMTP_URL, MAIL_FROM; server/config.ts), one connection per
 * message (mail here is rare: a reset, a verification, an invitation).
 */
import nodemailer, { type NodemailerError } from 'nodemailer';
import type { MailSettings } from '../config.ts';
import { MailRejectedError, type MailMessage, type Mailer } from './mailer.ts';

/**
 * Timeouts shorter than nodemailer's (two minutes to connect, ten idle), so
 * that an SMTP server that hangs fails the attempt, which is retried, rather
 * than holding a job for minutes.
 */
const CONNECTION_TIMEOUT_MS = 20_000;
const GREETING_TIMEOUT_MS = 20_000;
const SOCKET_TIMEOUT_MS = 60_000;

export class SmtpMailer implements Mailer {
  readonly description: string;
  private readonly transport: ReturnType<typeof nodemailer.createTransport>;
  private readonly from: string;

  constructor(settings: MailSettings) {
    this.from = settings.from;
    const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
    this.description = `${settings.secure ? 'smtps' : 'smtp'}://${settings.user ? `${settings.user}@` : ''}${host}:${settings.port}, from ${settings.from}`;
    this.transport = nodemailer.createTransport({
      host: settings.host,
      port: settings.port,
      secure: settings.secure,
      requireTLS: settings.requireTls,
      auth: settings.user ? { user: settings.user, pass: settings.password ?? '' } : undefined,
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      greetingTimeout: GREETING_TIMEOUT_MS,
      socketTimeout: SOCKET_TIMEOUT_MS,
      // Nothing in a message comes from a file or a URL: refuse both, should a value ever look like one.
      disableFileAccess: true,
      disableUrlAccess: true,
    });
  }

  async send(message: MailMessage): Promise<void> {
    try {
      await this.transport.sendMail({ from: this.from, to: message.to, subject: message.subject, text: message.text, html: message.html });
    } catch (error) {
      const failure = error as NodemailerError;
      // RFC 5321 section 4.2.1: "5yz Permanent Negative Completion reply", nodemailer's `permanent`. Only a refusal of
      // the recipient or the message counts: a 5xx to AUTH (wrong credentials) is the operator's to fix, and the mail
      // goes out on a later attempt once they have.
      if (failure.permanent === true && (failure.code === 'EENVELOPE' || failure.code === 'EMESSAGE')) {
        throw new MailRejectedError(`The mail server refused the mail to ${message.to}: ${failure.response ?? failure.message}`);
      }
      throw error;
    }
  }

  close(): void {
    this.transport.close();
  }
}
