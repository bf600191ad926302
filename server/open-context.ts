/**
 * The context every resource is handed: the store, the blob store, the
 * clock, the signer and the other side effects, opened from a configuration.
 * Apart from server.ts (which adds the HTTP app), so that `npm run worker`
 * opens the same context without loading the HTTP app.
 */
import { mkdirSync } from 'node:fs';
import { dataDirMode, type Config } from './config.ts';
import type { Context } from './context.ts';
import { openStore } from './repositories.ts';
import { openBlobStore } from './blobs/open-blob-store.ts';
import { UrlSigner } from './signing/url-signer.ts';
import { SecretBox } from './signing/secret-box.ts';
import { checkSigningSecret } from './signing/secret-fingerprint.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { createLogger, type Logger } from './lib/logger.ts';
import { BoxListCache } from './resources/boxes/box-list-cache.ts';
import { SystemMediaTools, type MediaTools } from './audio/media-tools.ts';
import type { PaymentProvider } from './payments/payment-provider.ts';
import type { Mailer } from './mail/mailer.ts';

/**
 * Opens the blob store and the store (applying migrations), checks that this
 * process's signing secret is the one the database's other processes use,
 * and gathers what the resources need.
 */
export async function createContext(
  config: Config,
  overrides: { clock?: Clock; logger?: Logger; media?: MediaTools } = {},
  jobQueued: () => void = () => {},
): Promise<Context> {
  mkdirSync(config.dataDir, { recursive: true, mode: dataDirMode });
  const logger = overrides.logger ?? createLogger(config.logLevel);
  // Before the store: a bucket that cannot be used stops the start with nothing opened.
  const blobs = await openBlobStore(config);
  // The repositories are registered here, at the composition root (server/repositories.ts), not by the store.
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, logger });
  try {
    // Before anything signs: a secret the other processes on this database do not share stops the start.
    await checkSigningSecret(store.db, config.signingSecret, (overrides.clock ?? systemClock).now());
  } catch (error) {
    await store.close();
    throw error;
  }
  // Stripe's SDK and nodemailer are loaded only when configured: each holds 10–20 MiB a server without them never uses.
  const payments: PaymentProvider | undefined = config.stripe ? new (await import('./payments/stripe-provider.ts')).StripeProvider(config.stripe) : undefined;
  const mailer: Mailer | undefined = config.mail ? new (await import('./mail/smtp-mailer.ts')).SmtpMailer(config.mail) : undefined;
  return {
    config,
    store,
    blobs,
    clock: overrides.clock ?? systemClock,
    signer: new UrlSigner(config.signingSecret),
    secrets: new SecretBox(config.signingSecret),
    logger,
    boxListCache: new BoxListCache(),
    media: overrides.media ?? new SystemMediaTools(),
    payments,
    mailer,
    jobQueued,
  };
}
