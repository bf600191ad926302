/**
 * The scopes an app may ask for, the accounts' ten (schemas/tokens.yaml,
 * TokenScope), and what the consent page says each lets the app do, in the
 * spec's own words (the `oauth2` security scheme's scopes), read from the
 * bundled spec so that the page and the docs never disagree.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Schemas } from '../../lib/api-types.ts';
import { ALL_SCOPES } from '../account/token-service.ts';

export const SCOPES: readonly Schemas['TokenScope'][] = ALL_SCOPES;

let words: Record<string, string> | undefined;

/** What `scope` lets an app do, as the consent page says it ("Read projects, …"). */
export function scopeInWords(scope: string): string {
  words ??= (
    JSON.parse(readFileSync(resolve(import.meta.dirname, '../../../generated/openapi.json'), 'utf8')) as {
      components: { securitySchemes: { oauth2: { flows: { authorizationCode: { scopes: Record<string, string> } } } } };
    }
  ).components.securitySchemes.oauth2.flows.authorizationCode.scopes;
  return words[scope] ?? scope;
}
