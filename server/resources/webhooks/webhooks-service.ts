/**
 * Webhook subscriptions: each is its account's alone, and one an OAuth app
 * made is that app's (webhook-ownership.ts, the rule every operation here
 * asks); any other answers 404, as a resource one may not see does
 * everywhere in this API.
 */
import { randomBytes } from 'node:crypto';
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { Caller } from '../../auth/access.ts';
import { newId } from '../../lib/ids.ts';
import { badRequest, conflict, notFound } from '../../lib/problems.ts';
import { ForbiddenAddressError, resolveAllowed } from '../../lib/outbound-addresses.ts';
import type { DeliveryRecord, WebhookRecord } from './webhook-repository.ts';
import { mayManageWebhook, requireWebhook, type WebhookCredential } from './webhook-ownership.ts';

type Ports = Pick<Context, 'store' | 'clock' | 'config' | 'secrets' | 'jobQueued'>;

/** The names of the apps that made these subscriptions, by app id, for their `app`; one query per app, of the few an account has. */
async function appNames(ctx: Ports, webhooks: readonly WebhookRecord[]): Promise<Map<string, string>> {
  const ids = [...new Set(webhooks.flatMap((webhook) => (webhook.appId ? [webhook.appId] : [])))];
  const apps = await Promise.all(ids.map((id) => ctx.store.oauth.findApp(id)));
  // An app's subscriptions are deleted with it (migration 30's cascade): one not found is being deleted now, and named by its id.
  return new Map(ids.map((id, i) => [id, apps[i]?.name ?? id]));
}

/** How long the previous secret keeps signing after a rotation. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;
/** How far back the delivery log goes. */
export const DELIVERY_LOG_MS = 30 * 24 * 3_600_000;
const DELIVERY_LOG_MAX = 1000;

/** Standard Webhooks 1.0: a secret is `whsec_` and base64 of 24 to 64 random bytes. */
const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

export function webhookJson(webhook: WebhookRecord, names: ReadonlyMap<string, string> = new Map()): Schemas['Webhook'] {
  return {
    id: webhook.id,
    object: 'webhook',
    label: webhook.label,
    url: webhook.url,
    events: webhook.events,
    enabled: webhook.enabled,
    disabledReason: webhook.disabledReason,
    timeCreated: webhook.timeCreated,
    timeModified: webhook.timeModified,
    secretRotated: webhook.secretRotated,
    ...(webhook.appId ? { app: { id: webhook.appId, name: names.get(webhook.appId) ?? webhook.appId } } : {}),
  };
}

/** The subscription as the API shows it, with the name of the app that made it. */
const shown = async (ctx: Ports, webhook: WebhookRecord) => webhookJson(webhook, await appNames(ctx, [webhook]));

export function deliveryJson(delivery: DeliveryRecord): Schemas['WebhookDelivery'] {
  return {
    id: delivery.id,
    object: 'webhook_delivery',
    webhookid: delivery.webhookId,
    eventid: delivery.eventId,
    type: delivery.type,
    status: delivery.status,
    attempts: delivery.attempts,
    nextAttempt: delivery.nextAttempt,
    timeCreated: delivery.timeCreated,
  };
}

/**
 * Refuses a URL whose host is, or resolves to, an address the server must
 * not reach (server/lib/outbound-addresses.ts). A host that does not resolve
 * yet is taken: its DNS may be set up later, and every delivery checks the
 * address again before it connects, which is where the check must hold.
 */
async function checkUrl(ctx: Ports, url: string): Promise<void> {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || !parsed.hostname) {
    throw badRequest(`The webhook URL must be an absolute http or https URL with a host; got "${url}".`, [{ pointer: '#/url', detail: 'must be an http(s) URL' }]);
  }
  const { hostname } = parsed;
  try {
    // A short wait: the answer is only a first check, and the caller is waiting.
    await resolveAllowed(hostname, ctx.config.webhooks.allowPrivate, 2000);
  } catch (error) {
    if (error instanceof ForbiddenAddressError) {
      throw badRequest(`The webhook URL cannot be used: ${error.message}. Give a public http(s) URL of your endpoint.`, [{ pointer: '#/url', detail: error.message }]);
    }
  }
}

/** The subscription, if the caller may manage it (the policy's account:own); otherwise 404, as for one that does not exist. */
async function ownWebhook(ctx: Ports, caller: Caller, credential: WebhookCredential | undefined, webhookId: string): Promise<WebhookRecord> {
  const webhook = await ctx.store.webhooks.get(webhookId);
  // One that does not exist is refused as one of another account's: with the same words.
  requireWebhook(caller, credential, webhook ?? { id: webhookId, userId: '', appId: null });
  return webhook!;
}

export async function createWebhook(ctx: Ports, caller: Caller, credential: WebhookCredential | undefined, body: Schemas['CreateWebhookRequest']): Promise<Schemas['WebhookWithSecret']> {
  await checkUrl(ctx, body.url);
  const now = ctx.clock.now();
  const secret = newSecret();
  const webhook: WebhookRecord = {
    id: newId('whk'),
    userId: caller.id,
    label: body.label ?? '',
    url: body.url,
    events: body.events,
    enabled: true,
    disabledReason: null,
    sealedSecret: ctx.secrets.seal(secret),
    sealedPreviousSecret: null,
    previousSecretExpires: null,
    secretRotated: null,
    timeCreated: now,
    timeModified: now,
    // Made by an app: it is that app's, and ends with the grant its token was issued under (webhook-ownership.ts).
    appId: credential?.appId ?? null,
    grantId: credential?.appId === undefined ? null : (credential.grantId ?? null),
  };
  await ctx.store.webhooks.insert(webhook);
  return { ...(await shown(ctx, webhook)), secret };
}

export async function listWebhooks(ctx: Ports, caller: Caller, credential: WebhookCredential | undefined): Promise<Schemas['Webhook'][]> {
  const webhooks = (await ctx.store.webhooks.listOf(caller.id)).filter((webhook) => mayManageWebhook(caller, credential, webhook));
  const names = await appNames(ctx, webhooks);
  return webhooks.map((webhook) => webhookJson(webhook, names));
}

export async function getWebhook(ctx: Ports, caller: Caller, credential: WebhookCredential | undefined, webhookId: string): Promise<Schemas['Webhook']> {
  return shown(ctx, await ownWebhook(ctx, caller, credential, webhookId));
}

export async function updateWebhook(ctx: Ports, caller: Caller, credential: WebhookCredential | undefined, webhookId: string, body: Schemas['UpdateWebhookRequest']): Promise<Schemas['Webhook']> {
  await ownWebhook(ctx, caller, credential, webhookId);
  if (body.url !== undefined) await checkUrl(ctx, body.url);
  // Turned on or off by its owner: the server's reason for disabling it no longer holds, or is not the reason now.
  const disabledReason = body.enabled === undefined ? undefined : null;
  await ctx.store.webhooks.update(webhookId, { label: body.label, url: body.url, events: body.events, enabled: body.enabled, disabledReason }, ctx.clock.now());
  return shown(ctx, (await ctx.store.webhooks.get(webhookId))!);
}

export async function deleteWebhook(ctx: Ports, caller: Caller, credential: WebhookCredential | undefined, webhookId: string): Promise<Record<string, never>> {
  await ownWebhook(ctx, caller, credential, webhookId);
  // Its deliveries go with it (ON DELETE CASCADE); their queued jobs find nothing and end.
  await ctx.store.webhooks.delete(webhookId);
  return {};
}

export async function rotateWebhookSecret(ctx: Ports, caller: Caller, credential: WebhookCredential | undefined, webhookId: string): Promise<Schemas['WebhookSecret']> {
  const webhook = await ownWebhook(ctx, caller, credential, webhookId);
  const now = ctx.clock.now();
  const secret = newSecret();
  const previousSecretExpires = now + SECRET_OVERLAP_MS;
  await ctx.store.webhooks.rotateSecret(webhookId, ctx.secrets.seal(secret), webhook.sealedSecret, previousSecretExpires, now);
  return { object: 'webhook_secret', secret, previousSecretExpires };
}

export async function listWebhookDeliveries(ctx: Ports, caller: Caller, credential: WebhookCredential | undefined, webhookId: string): Promise<Schemas['WebhookDelivery'][]> {
  await ownWebhook(ctx, caller, credential, webhookId);
  const deliveries = await ctx.store.webhooks.deliveriesOf(webhookId, ctx.clock.now() - DELIVERY_LOG_MS, DELIVERY_LOG_MAX);
  return deliveries.map(deliveryJson);
}

export async function redeliverWebhook(ctx: Ports, caller: Caller, credential: WebhookCredential | undefined, webhookId: string, deliveryId: string): Promise<Schemas['WebhookDelivery']> {
  const webhook = await ownWebhook(ctx, caller, credential, webhookId);
  if (!webhook.enabled) throw conflict(`The webhook ${webhookId} is disabled, so nothing is sent to it. Turn it on (enabled: true) first, then redeliver.`);
  const now = ctx.clock.now();
  return ctx.store.transaction(async (store) => {
    const delivery = await store.webhooks.getDelivery(deliveryId);
    if (!delivery || delivery.webhookId !== webhookId) throw notFound(`There is no delivery ${deliveryId} of webhook ${webhookId}.`);
    if (delivery.status === 'pending') throw conflict(`The delivery ${deliveryId} is still pending: its next attempt is under way or due. Redeliver it once it has succeeded or failed.`);
    await store.webhooks.redeliver(deliveryId, now);
    store.afterCommit(() => ctx.jobQueued());
    return deliveryJson({ ...delivery, status: 'pending', nextAttempt: now });
  });
}
