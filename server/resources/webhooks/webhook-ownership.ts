/**
 * Who may see and manage a webhook subscription: the one rule, here, that
 * every webhook operation asks (webhooks-service.ts). Issue 28 ("One door"):
 * a subscription an OAuth app made went on delivering the person's data
 * after the app was revoked, and any other app with `webhooks:*` could list,
 * rotate or delete it.
 *
 * - A subscription is its account's: nobody acting for another account sees
 *   it.
 * - An OAuth app (an access token whose `req.auth` names its `appId`) sees
 *   and manages only the subscriptions it made itself, under any of its
 *   grants for the account; another app's, and the person's own, are as
 *   unknown to it as a missing one (404, as the API answers for what the
 *   caller may not see), so that an app cannot probe for them either.
 * - The person (a personal token or the session) sees and manages every
 *   subscription of the account, those the apps made included: they can see
 *   what each app listens to, and remove it.
 *
 * What an app made also ends with its grant: revoking the app, or the grant
 * ending, or the app being deleted, deletes its subscriptions in that same
 * transaction (oauth-apps.ts, oauth-provider.ts, and migration 30's cascade).
 *
 * Kept apart so that it can move, whole, into the central policy
 * (server/auth/policy.ts) later.
 */
import type { Caller } from '../../auth/access.ts';
import type { WebhookRecord } from './webhook-repository.ts';

/** What the rule reads of the request's credential (`req.auth`, server/http/request-context.ts). */
export interface WebhookCredential {
  /** Set for an OAuth access token: the app it was issued to. */
  appId?: string;
  /** Set for an OAuth access token: the grant it was issued under. */
  grantId?: string;
}

/** Whether `caller`, with this credential, may see and manage `webhook`; the caller is answered 404 when not. */
export function mayManageWebhook(caller: Caller, credential: WebhookCredential | undefined, webhook: Pick<WebhookRecord, 'userId' | 'appId'>): boolean {
  if (webhook.userId !== caller.id) return false;
  // The person's own credentials (a personal token, the session) see all of the account's; an app, only its own.
  if (credential?.appId === undefined) return true;
  return webhook.appId === credential.appId;
}
