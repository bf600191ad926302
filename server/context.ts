/**
 * Everything the resources need, made once at start and handed down: the
 * side effects (store, blobs, clock, signer) behind their interfaces, and the
 * configuration.
 */
import type { Config } from './config.ts';
import type { Store } from './repositories.ts';
import type { BlobStore } from './blobs/blob-store.ts';
import type { Clock } from './lib/clock.ts';
import type { UrlSigner } from './signing/url-signer.ts';
import type { SecretBox } from './signing/secret-box.ts';
import type { Logger } from './lib/logger.ts';
import type { BoxListCache } from './resources/boxes/box-list-cache.ts';
import type { ProjectListing } from './resources/boxes/box-listing.ts';
import type { MediaTools } from './audio/media-tools.ts';
import type { PaymentProvider } from './payments/payment-provider.ts';
import type { Mailer } from './mail/mailer.ts';

export interface Context {
  config: Config;
  store: Store;
  blobs: BlobStore;
  clock: Clock;
  signer: UrlSigner;
  /** Seals the secrets the server must read back (webhook signing secrets). */
  secrets: SecretBox;
  logger: Logger;
  /** Listings of projects' boxes, by box version. */
  boxListCache: BoxListCache<ProjectListing>;
  media: MediaTools;
  /** Where listeners pay for paywalls (Stripe); undefined on a server that takes no payments. */
  payments: PaymentProvider | undefined;
  /**
   * Where this process sends mail (SMTP_URL); undefined when it sends none.
   * Only the mail worker calls it: the resources queue mail with
   * queueMail (server/resources/mail/mail-outbox.ts).
   */
  mailer: Mailer | undefined;
  /** Tells this process's workers, if it runs any, that a job was queued. */
  jobQueued(): void;
}

