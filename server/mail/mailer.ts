/**
 * The mail port: one message to one address, plain text and HTML. The SMTP
 * backend (smtp-mailer.ts) is the one the server uses; without SMTP_URL
 * there is no mailer at all, and nothing is mailed (the links are in the API
 * answers and the admin CLI instead).
 *
 * A mailer is only ever called from the job queue's mail worker
 * (server/resources/mail/), never inside a request: a slow or absent SMTP
 * server then delays a mail, not an answer, and a failed send is retried.
 */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  /**
   * Hands the message to the mail server. Throws MailRejectedError when the
   * server refused this message for good; any other error is worth a retry.
   */
  send(message: MailMessage): Promise<void>;
  /** What it sends through, for the start banner and the logs (never a password). */
  readonly description: string;
  close(): void;
}

/**
 * The server refused the message or its recipient for good (an SMTP 5xx
 * answer to RCPT TO or DATA): sending it again would get the same answer.
 */
export class MailRejectedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MailRejectedError';
  }
}
