/**
 * Who may see and manage a webhook subscription: the policy's `account:own`
 * (server/auth/policy.ts, ownsThing), asked through `authorize`. Issue 28
 * ("One door"): a subscription an OAuth app made went on delivering the
 * person's data after the app was revoked, and any other app with
 * `webhooks:*` could list, rotate or delete it.
 *
 * - A subscription is its account's: nobody acting for another account sees
 *   it.
 * - An OAuth app (an access token whose `req.auth` names its `appId`) sees
 *   and manages only the subscriptions it made itself, under any of its
 *   grants for the account; another app's, and the person's own, are as
 *   unknown to it as a missing one (404).
 * - The person (a personal token or the session) sees and manages every
 *   subscription of the account, those the apps made included.
 *
 * What an app made also ends with its grant: revoking the app, or the grant
 * ending, or the app being deleted, deletes its subscriptions in that same
 * transaction (oauth-apps.ts, oauth-provider.ts, and migration 30's cascade).
 */
import type { Caller } from '../../auth/access.ts';
import { authorize, can, type Actor } from '../../auth/authorize.ts';
import type { WebhookRecord } from './webhook-repository.ts';

/** What the rule reads of the request's credential (`req.auth`, server/http/request-context.ts). */
export interface WebhookCredential {
  /** Set for an OAuth access token: the app it was issued to. */
  appId?: string;
  /** Set for an OAuth access token: the grant it was issued under. */
  grantId?: string;
}

const actor = (caller: Caller, credential: WebhookCredential | undefined): Actor => ({
  userId: caller.id,
  scopes: 'all',
  ...(credential?.appId !== undefined ? { appId: credential.appId } : {}),
});
const thing = (webhook: Pick<WebhookRecord, 'id' | 'userId' | 'appId'>) => ({ kind: 'webhook' as const, id: webhook.id, ownerId: webhook.userId, appId: webhook.appId });

/** Whether `caller`, with this credential, may see and manage `webhook`. */
export function mayManageWebhook(caller: Caller, credential: WebhookCredential | undefined, webhook: Pick<WebhookRecord, 'id' | 'userId' | 'appId'>): boolean {
  return can(actor(caller, credential), { permission: 'account:own', thing: thing(webhook) });
}

/** Throws the policy's 404 unless `caller` may manage `webhook`. */
export function requireWebhook(caller: Caller, credential: WebhookCredential | undefined, webhook: Pick<WebhookRecord, 'id' | 'userId' | 'appId'>): void {
  authorize(actor(caller, credential), { permission: 'account:own', thing: thing(webhook) });
}
