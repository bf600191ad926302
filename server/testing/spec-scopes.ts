/**
 * The operations of the bundled spec (generated/openapi.json) that an
 * account's credential reaches, each with the one scope it names in its
 * `oauth2` requirement, for the tests of scopes (http/scopes.test.ts, the
 * authorization matrix).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The scopes of the issues, in their order: the ten of the accounts issue, and `admin` (issue 28). */
export const SCOPES = [
  'projects:read',
  'projects:write',
  'players:read',
  'players:write',
  'comments:read',
  'comments:write',
  'webhooks:read',
  'webhooks:write',
  'account:read',
  'account:write',
  'admin',
] as const;

export type Requirement = Record<string, string[]>;
type Json = Record<string, unknown>;
export interface SpecOperation {
  operationId: string;
  tags?: string[];
  security?: Requirement[];
  parameters?: Json[];
  requestBody?: Json;
  responses: Record<string, unknown>;
}
export interface Spec {
  security?: Requirement[];
  paths: Record<string, Record<string, SpecOperation> & { parameters?: Json[] }>;
  webhooks: Record<string, Record<string, SpecOperation>>;
  components: { securitySchemes: Record<string, { type: string; in?: string; name?: string; scheme?: string; flows?: { authorizationCode?: { scopes?: Record<string, string> } } }> };
}

export const spec = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../generated/openapi.json'), 'utf8')) as Spec;

/** The schemes of an account's tokens: personal bearer tokens, and the OAuth tokens to come. Both carry scopes. */
export const TOKEN_SCHEMES = ['bearerAuth', 'oauth2'];
/** Every scheme through which an account calls the API: its tokens and its browser session. */
export const ACCOUNT_SCHEMES = [...TOKEN_SCHEMES, 'sessionCookie'];
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/** Follows a local `$ref` of the bundle. */
export function deref<T = Json>(node: unknown): T {
  let at = node as Json;
  while (at && typeof at.$ref === 'string') {
    at = (at.$ref as string)
      .slice(2)
      .split('/')
      .reduce<Json>((parent, key) => parent[key.replace(/~1/g, '/').replace(/~0/g, '~')] as Json, spec as unknown as Json);
  }
  return at as T;
}

export const specOperations = Object.entries(spec.paths).flatMap(([path, item]) =>
  METHODS.filter((method) => item[method]).map((method) => ({ path, method, operation: item[method] as SpecOperation })),
);

export interface ScopedOperation {
  operationId: string;
  method: string;
  path: string;
  tag: string | undefined;
  /** The scope its `oauth2` requirement names (undefined when it names none). */
  scope: string | undefined;
  /** Open to anyone (`{}` among its requirements): a token is checked only when one is sent. */
  open: boolean;
  /** Whether the account's session cookie is one of its requirements. */
  session: boolean;
  /** Its path parameters, with the spec's example of each. */
  pathParameters: Array<{ name: string; example: unknown }>;
  /** The spec's example of its JSON request body, if it takes one. */
  bodyExample: unknown;
}

const takes = (operation: SpecOperation, schemes: string[]) => (operation.security ?? []).some((requirement) => schemes.some((scheme) => scheme in requirement));

/** The operations a token may call: those with a token scheme among their requirements. */
export const scopedOperations: ScopedOperation[] = specOperations.filter(({ operation }) => takes(operation, TOKEN_SCHEMES)).map(describeOperation);

/** The operations the session may call and a token may not: signing in, and managing the account's sessions and password. */
export const sessionOnlyOperations: ScopedOperation[] = specOperations.filter(({ operation }) => takes(operation, ['sessionCookie']) && !takes(operation, TOKEN_SCHEMES)).map(describeOperation);

/** What the tests need of an operation. */
function describeOperation({ path, method, operation }: { path: string; method: string; operation: SpecOperation }): ScopedOperation {
  const security = operation.security ?? [];
  const parameters = [...(spec.paths[path].parameters ?? []), ...(operation.parameters ?? [])].map((parameter) => deref<{ name: string; in: string; example?: unknown; schema?: Json }>(parameter));
  const json = operation.requestBody ? deref<{ content?: Record<string, { example?: unknown; examples?: Record<string, unknown>; schema?: Json }> }>(operation.requestBody).content?.['application/json'] : undefined;
  const firstExample = json?.examples ? deref<{ value: unknown }>(Object.values(json.examples)[0]).value : undefined;
  return {
    operationId: operation.operationId,
    method,
    path,
    tag: operation.tags?.[0],
    scope: security.find((requirement) => 'oauth2' in requirement)?.oauth2[0],
    open: security.some((requirement) => Object.keys(requirement).length === 0),
    session: security.some((requirement) => 'sessionCookie' in requirement),
    pathParameters: parameters.filter((parameter) => parameter.in === 'path').map((parameter) => ({ name: parameter.name, example: parameter.example ?? deref(parameter.schema).example })),
    bodyExample: json ? (json.example ?? firstExample ?? deref(json.schema).example) : undefined,
  };
}
