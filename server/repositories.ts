/**
 * The composition root of the data layer: which repositories the server has.
 * `server/store/` only knows how to open a database and build a registry over
 * it; this module registers the resources' repositories, so that no lower
 * layer imports a resource. Services take the `Store` type from here.
 */
import type { Db } from './store/db.ts';
import { openDatabase, storeOver, type DatabaseOptions, type StoreOf } from './store/store.ts';
import { UserRepository } from './resources/account/user-repository.ts';
import { TokenRepository } from './resources/account/token-repository.ts';
import { AccountDeletionRepository } from './resources/account/account-deletion-repository.ts';
import { UserAdminRepository } from './resources/admin/user-admin-repository.ts';
import { ProjectRepository } from './resources/projects/project-repository.ts';
import { BoxRepository } from './resources/boxes/box-repository.ts';
import { PlayerRepository } from './resources/players/player-repository.ts';
import { UploadRepository } from './resources/uploads/upload-repository.ts';
import { JobQueue } from './jobs/job-queue.ts';
import { CommentRepository } from './resources/comments/comment-repository.ts';
import { PurchaseRepository } from './resources/listening/purchase-repository.ts';
import { InsightsRepository } from './resources/insights/insights-repository.ts';
import { SandboxRepository } from './resources/sandbox/sandbox-repository.ts';
import { WebhookRepository } from './resources/webhooks/webhook-repository.ts';
import { DeliveryQueue } from './resources/webhooks/delivery-queue.ts';
import { PortalRepository } from './resources/portal/portal-repository.ts';
import { ProjectUploadRepository } from './resources/project-uploads/project-upload-repository.ts';
import { PasskeyRepository } from './resources/passkeys/passkey-repository.ts';
import { SessionRepository } from './resources/sessions/session-repository.ts';
import { OneTimeLinkRepository } from './resources/account/one-time-link-repository.ts';
import { SecurityEventRepository } from './resources/account/security-events.ts';
import { SsoRepository } from './resources/sso/sso-repository.ts';
import { NotificationRepository } from './resources/notifications/notification-repository.ts';
import { OAuthRepository } from './resources/oauth/oauth-repository.ts';

export function registerRepositories(db: Db) {
  return {
    users: new UserRepository(db),
    tokens: new TokenRepository(db),
    projects: new ProjectRepository(db),
    boxes: new BoxRepository(db),
    players: new PlayerRepository(db),
    uploads: new UploadRepository(db),
    jobs: new JobQueue(db),
    comments: new CommentRepository(db),
    purchases: new PurchaseRepository(db),
    insights: new InsightsRepository(db),
    sandbox: new SandboxRepository(db),
    webhooks: new WebhookRepository(db),
    deliveries: new DeliveryQueue(db),
    portal: new PortalRepository(db),
    projectUploads: new ProjectUploadRepository(db),
    passkeys: new PasskeyRepository(db),
    sessions: new SessionRepository(db),
    oneTimeLinks: new OneTimeLinkRepository(db),
    securityEvents: new SecurityEventRepository(db),
    sso: new SsoRepository(db),
    accountDeletion: new AccountDeletionRepository(db),
    userAdmin: new UserAdminRepository(db),
    notifications: new NotificationRepository(db),
    oauth: new OAuthRepository(db),
  };
}

export type Repositories = ReturnType<typeof registerRepositories>;

/** Every repository over one database, and transactions over all of them. */
export type Store = StoreOf<Repositories>;

/** Opens the database (applying migrations) with every repository over it. */
export async function openStore(options: DatabaseOptions): Promise<Store> {
  return storeOver(await openDatabase(options), registerRepositories);
}
