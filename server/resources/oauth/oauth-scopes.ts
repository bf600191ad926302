/**
 * The scopes an app may ask for, of the accounts' eleven (schemas/tokens.yaml,
 * TokenScope), and what the consent page says each lets the app do, in the
 * spec's own words (the `oauth2` security scheme's scopes, in the operation
 * table made from it at generate time), so that the page and the docs never
 * disagree.
 *
 * `admin` is the server's administration. An app is never granted it unless
 * the operator allows it (OAUTH_ALLOW_ADMIN_SCOPE): without that, asking for
 * it is refused with invalid_scope before the consent page (RFC 6749
 * §4.1.2.1, "The requested scope is invalid, unknown, or malformed").
 */
import type { Schemas } from '../../lib/api-types.ts';
import { SCOPE_WORDS } from '../../../generated/operations.ts';
import { ALL_SCOPES } from '../account/token-service.ts';

export const SCOPES: readonly Schemas['TokenScope'][] = ALL_SCOPES;

/** The scopes an app may be granted on this server: every scope, `admin` only where the operator allows it. */
export function appScopes(allowAdmin: boolean): readonly Schemas['TokenScope'][] {
  return allowAdmin ? SCOPES : SCOPES.filter((scope) => scope !== 'admin');
}

/** What `scope` lets an app do, as the consent page says it ("Read projects, …"). */
export function scopeInWords(scope: string): string {
  return SCOPE_WORDS[scope] ?? scope;
}

/** The warning the consent page gives beside a scope that hands the app more than the person's own things, in words. */
export function scopeWarning(scope: string): string | undefined {
  return scope === 'admin'
    ? 'This lets the app act as an administrator of this server: change anyone\'s account, make administrators, and invite people. Allow it only for a tool you run yourself.'
    : undefined;
}
