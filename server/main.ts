/** `npm start`: the server, configured from the environment (see config.ts and the README). */
import { flushCompileCache } from 'node:module';
import { type DestinationStream, pino } from 'pino';
import { adminTokenCommand, describeDatabase } from './admin/admin-command.ts';
import { loadConfigOrExit } from './config.ts';
import { createLogger } from './lib/logger.ts';
import { startServer } from './server.ts';
import { describeBlobStore } from './blobs/open-blob-store.ts';
import { BlobStoreUnavailableError } from './blobs/blob-store.ts';
import { SigningSecretMismatchError } from './signing/secret-fingerprint.ts';
import { createSetupLink } from './resources/account/setup-link.ts';

/**
 * Holds the log lines written while the server starts (the audio worker
 * says it started, the sweep runs) until the banner is out, so that the
 * first thing `npm start` shows is the address; then passes them, and every
 * line after, to stdout, written asynchronously in batches as logger.ts does.
 *
 * Each line is handed on as bytes, to a destination in sonic-boom's buffer
 * mode: in its text mode, every write measured the byte length of all the
 * text gathered while the last write was under way (Buffer.byteLength of its
 * last buffer), so that a line cost more the busier the server (issue 32: a
 * few µs of every request under load). In buffer mode it adds up the lines'
 * lengths instead, and joins them once per write. The same bytes reach stdout.
 */
class HeldUntilReleased implements DestinationStream {
  private held: string[] | undefined = [];
  private readonly target: { write(bytes: Buffer): unknown };

  constructor(target: { write(bytes: Buffer): unknown }) {
    this.target = target;
  }
  write(line: string): void {
    if (this.held) this.held.push(line);
    else this.target.write(Buffer.from(line));
  }
  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const line of held) this.target.write(Buffer.from(line));
  }
}

const config = loadConfigOrExit();
const logs = new HeldUntilReleased(pino.destination({ dest: 1, sync: false, contentMode: 'buffer' }) as unknown as { write(bytes: Buffer): unknown });

let server: Awaited<ReturnType<typeof startServer>>;
try {
  server = await startServer(config, { logger: createLogger(config.logLevel, logs) });
} catch (error) {
  // What was logged on the way may say why it failed.
  logs.release();
  // A bucket that cannot be used, or a signing secret the other servers do not share, is a setting to fix, said plainly, not a stack trace.
  if (error instanceof BlobStoreUnavailableError || error instanceof SigningSecretMismatchError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
}
// The address first: it is what a newcomer looks for. Then the one command they need
// next, for this very configuration, so that the token it mints is one this server knows.
const token = adminTokenCommand(config, process.env);
// The accounts rules: "On a database with no account, npm start prints, right after its address, a one-time link".
const setupLink = config.sandbox ? undefined : await createSetupLink(server.ctx);
console.error(
  [
    `Audio Share is listening at ${server.address} (public URL ${config.publicUrl}).`,
    ...(setupLink ? [`Create the first account: ${setupLink}`] : []),
    ...(config.sandbox
      ? [
          '  SANDBOX: any bearer token is accepted and gets an account of its own with a demo project; nothing here is kept.',
          `  Token: any, such as: curl -H 'Authorization: Bearer my-sandbox-token' ${config.publicUrl}/api/v1/projects`,
        ]
      : [`  Token: ${token.command}`, ...(token.passwordHidden ? ['         (add the password of DATABASE_URL to the URL; it is not printed here)'] : [])]),
    `  API:   ${config.publicUrl}/api/v1`,
    `  Docs:  ${config.publicUrl}/docs`,
    server.ctx.mailer
      ? `  Mail:  sent through ${server.ctx.mailer.description}`
      : '  Mail:  off (no SMTP_URL): nothing is mailed; invitation links are in the API answers, reset links come from the admin CLI (user reset-link)',
    // Last: the tests wait for this line as the banner's end.
    `  Data:  ${describeDatabase(config)}; files in ${describeBlobStore(config)}`,
  ].join('\n'),
);
logs.release();
// Everything a start loads is loaded: the compile cache (server/compile-cache.js) is written now, not only at a clean
// exit, so that a server that is killed still leaves the next start its cache. A no-op where the cache is off.
flushCompileCache();

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    console.error(`${signal}: finishing requests under way (at most ${config.shutdownGraceMs / 1000} s), then stopping.`);
    await server.close();
    process.exit(0);
  });
}
