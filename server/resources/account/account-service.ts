import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { Caller } from '../../auth/access.ts';
import type { UserRecord } from './user-repository.ts';
import { requireIfMatch, type IfMatch, type Versioned } from '../../http/preconditions.ts';

/** The ports this service uses, and nothing more. */
type Ports = Pick<Context, 'store' | 'clock'>;

async function load(ctx: Ports, caller: Caller): Promise<UserRecord> {
  return (await ctx.store.users.get(caller.id))!;
}

function userJson(user: UserRecord): Schemas['User'] {
  return { id: user.id, object: 'user', email: user.email, ...(user.name !== null ? { name: user.name } : {}), timeCreated: user.timeCreated };
}

export async function getCurrentUser(ctx: Ports, caller: Caller): Promise<Schemas['User']> {
  return userJson(await load(ctx, caller));
}

/**
 * Sets or removes the display name. The spec's pattern (`\S`) has already
 * refused a name of spaces only; the stored name is trimmed, as the spec
 * says, so that what people see starts and ends with a visible character.
 */
export async function updateCurrentUser(ctx: Ports, caller: Caller, body: Schemas['UpdateCurrentUserRequest']): Promise<Schemas['User']> {
  await ctx.store.users.setName(caller.id, body.name === null ? null : body.name.trim());
  return userJson(await load(ctx, caller));
}

export async function getPreferences(ctx: Ports, caller: Caller): Promise<Versioned<Schemas['PlayerPreferences']>> {
  const user = await load(ctx, caller);
  return { body: user.preferences, version: user.preferencesVersion };
}

/**
 * Merges the change into the stored preferences; null clears a preference.
 * The merge reads and writes in one transaction with the user's row locked,
 * so two changes to different preferences that race both land.
 */
export async function updatePreferences(
  ctx: Ports,
  caller: Caller,
  body: Schemas['UpdatePlayerPreferencesRequest'],
  ifMatch?: IfMatch,
): Promise<Versioned<Schemas['PlayerPreferences']>> {
  return ctx.store.transaction(async (store) => {
    const { preferences, preferencesVersion } = (await store.users.getForUpdate(caller.id))!;
    requireIfMatch(ifMatch, preferencesVersion, 'Your preferences', 'GET /me/preferences');
    const options: Record<string, unknown> = { ...preferences.options };
    for (const [name, value] of Object.entries(body.options ?? {})) {
      if (value === null) delete options[name];
      else options[name] = value;
    }
    const next: Schemas['PlayerPreferences'] = { options: options as Schemas['PlayerOptionsInput'] };
    const audience = body.public === undefined ? preferences.public : body.public;
    if (audience !== null && audience !== undefined) next.public = audience;
    return { body: next, version: await store.users.setPreferences(caller.id, next) };
  });
}

export function paymentProviderJson(user: UserRecord): Schemas['PaymentProvider'] {
  return user.paymentProvider ? { connected: true, ...user.paymentProvider } : { connected: false };
}

export async function getPaymentProvider(ctx: Ports, caller: Caller) {
  return paymentProviderJson(await load(ctx, caller));
}

export async function connectPaymentProvider(ctx: Ports, caller: Caller, body: Schemas['ConnectPaymentProviderRequest']) {
  await ctx.store.users.setPaymentProvider(caller.id, { provider: body.provider, accountId: body.accountId, timeConnected: ctx.clock.now() });
  return paymentProviderJson(await load(ctx, caller));
}

export async function disconnectPaymentProvider(ctx: Ports, caller: Caller) {
  await ctx.store.users.setPaymentProvider(caller.id, null);
  return paymentProviderJson(await load(ctx, caller));
}
