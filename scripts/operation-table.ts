/**
 * The operation table (generated/operations.ts): what every operation of the
 * spec is and who may call it, worked out once, at generate time, so that
 * nothing reads openapi.json at run time to decide it. The request path
 * (server/http/route.ts), authentication, validation, deprecation headers,
 * idempotency, `405 Allow`, dispatch, MCP, the OAuth consent texts, the mock
 * and the contract suite all read these rows.
 *
 * Refuses (throws) what the matcher could not answer unambiguously: a path
 * segment that mixes a literal and a parameter, and two operations of one
 * method whose paths could both match one request with the same number of
 * templated segments (neither is "more concrete").
 */
import { deprecationsOf, type OperationDeprecations } from '../server/http/deprecation.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
const isObject = (value: Json | undefined): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

export const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'] as const;

/** Who may call an operation, from its `security` (OpenAPI 3.1, Security Requirement Object). */
export interface SecurityRow {
  /** A bearer token (a personal token or an OAuth access token) is taken. */
  token: boolean;
  /** The account's browser session cookie is taken. */
  session: boolean;
  /** A listener's player session (its own cookie) is taken. */
  playerSession: boolean;
  /** `{}` is among the alternatives, or there are none: a caller with no credential may call it. */
  anonymous: boolean;
  /** The scope a token needs (the `oauth2` requirement's), when the operation names one. */
  scope?: string;
}

export interface OperationTableRow {
  id: string;
  method: string;
  /** The path template under /api/v1, as the spec writes it. */
  path: string;
  /** The template's segments: a literal, or `{name}` for a parameter. */
  segments: string[];
  /** How many segments are parameters: fewer is more concrete, and is tried first. */
  templated: number;
  security: SecurityRow;
  /** `json`: a JSON body (or none) the API parses and validates; `raw`: the handler reads the bytes itself (uploads, tus). */
  body: 'json' | 'raw' | 'none';
  /** The operation speaks a protocol of its own (tus 1.0.0), whose handler checks its own headers. */
  protocol?: 'tus';
  /** It takes the `Idempotency-Key` header. */
  idempotencyKey: boolean;
  /** What of it the spec deprecates: itself, its parameters, the fields of its body. */
  deprecation?: Omit<OperationDeprecations, 'operationId' | 'method' | 'path'>;
  /** `x-sandbox-only`: served by the sandbox alone. */
  sandboxOnly?: true;
}

type Requirement = Record<string, string[]>;

export function securityRow(security: Requirement[]): SecurityRow {
  // OpenAPI 3.1, Security Requirement Object: "To make security optional, an empty security requirement ({}) can be
  // included in the array."; an empty list means the operation takes no credential at all.
  const row: SecurityRow = {
    token: security.some((requirement) => 'bearerAuth' in requirement || 'oauth2' in requirement),
    session: security.some((requirement) => 'sessionCookie' in requirement),
    playerSession: security.some((requirement) => 'playerSession' in requirement),
    anonymous: security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0),
  };
  // "If the security scheme is of type "oauth2" or "openIdConnect", then the value is a list of scope names required
  // for the execution": our operations name one.
  const scopes = new Set(security.flatMap((requirement) => [...(requirement.oauth2 ?? []), ...(requirement.bearerAuth ?? [])]));
  if (scopes.size > 1) throw new Error(`an operation names more than one scope (${[...scopes].join(', ')}); the API checks one per operation`);
  const [scope] = scopes;
  if (scope !== undefined) row.scope = scope;
  return row;
}

export function operationTable(spec: JsonObject): OperationTableRow[] {
  const resolve = (node: Json | undefined): Json | undefined => {
    if (!isObject(node) || typeof node.$ref !== 'string') return node;
    return node.$ref
      .slice(2)
      .split('/')
      .reduce<Json | undefined>((at, part) => (isObject(at) ? at[part] : undefined), spec);
  };
  const deprecations = new Map(deprecationsOf(spec).map((found) => [found.operationId, found]));
  const topSecurity = (Array.isArray(spec.security) ? spec.security : []) as unknown as Requirement[];
  const rows: OperationTableRow[] = [];
  for (const [path, itemAt] of Object.entries(isObject(spec.paths) ? spec.paths : {})) {
    const item = resolve(itemAt);
    if (!isObject(item)) continue;
    const segments = path.split('/').slice(1);
    for (const segment of segments) {
      if (segment.includes('{') && !/^\{[^{}]+\}$/.test(segment)) throw new Error(`${path}: the segment ${segment} mixes a literal and a parameter; the matcher takes whole-segment parameters only`);
    }
    const parametersOf = (operation: JsonObject) =>
      [...(Array.isArray(item.parameters) ? item.parameters : []), ...(Array.isArray(operation.parameters) ? operation.parameters : [])].map(resolve).filter(isObject);
    // tus 1.0.0: "The Tus-Resumable header MUST be included in every request and response except for OPTIONS requests", so a path
    // whose operations take it is a tus resource, its OPTIONS (the capabilities) included.
    const takesTus = (operation: Json | undefined) => isObject(operation) && parametersOf(operation).some((parameter) => parameter.in === 'header' && parameter.name === 'Tus-Resumable');
    const tusPath = METHODS.some((method) => takesTus(item[method]));
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      if (typeof operation.operationId !== 'string') throw new Error(`${method.toUpperCase()} ${path} has no operationId`);
      const body = resolve(operation.requestBody);
      const media = isObject(body) && isObject(body.content) ? Object.keys(body.content) : [];
      const found = deprecations.get(operation.operationId);
      const row: OperationTableRow = {
        id: operation.operationId,
        method: method.toUpperCase(),
        path,
        segments,
        templated: segments.filter((segment) => segment.startsWith('{')).length,
        security: securityRow((Array.isArray(operation.security) ? operation.security : topSecurity) as unknown as Requirement[]),
        body: media.length === 0 ? 'none' : media.every((type) => type === 'application/json') ? 'json' : 'raw',
        idempotencyKey: parametersOf(operation).some((parameter) => parameter.in === 'header' && String(parameter.name).toLowerCase() === 'idempotency-key'),
      };
      if (tusPath) row.protocol = 'tus';
      if (found) {
        const { operationId: _id, method: _method, path: _path, ...rest } = found;
        row.deprecation = rest;
      }
      if (operation['x-sandbox-only'] === true) row.sandboxOnly = true;
      rows.push(row);
    }
  }
  // OpenAPI 3.1, Paths Object: "When matching URLs, concrete (non-templated) paths would be matched before their templated
  // counterparts." Fewer templated segments first; the sort is stable, so the spec's order stands among equals.
  rows.sort((a, b) => a.templated - b.templated);
  for (const [i, a] of rows.entries()) {
    for (const b of rows.slice(i + 1)) {
      if (a.method !== b.method || a.templated !== b.templated || a.segments.length !== b.segments.length) continue;
      const overlap = a.segments.every((segment, at) => segment === b.segments[at] || segment.startsWith('{') || b.segments[at].startsWith('{'));
      if (overlap) throw new Error(`${a.method} ${a.path} and ${b.method} ${b.path} can match the same request and neither is more concrete; the spec must tell them apart`);
    }
  }
  return rows;
}

/** What each scope lets a credential do, in the spec's words (the `oauth2` security scheme's scopes): the consent page's. */
export function scopeWords(spec: JsonObject): Record<string, string> {
  const schemes = isObject(spec.components) && isObject(spec.components.securitySchemes) ? spec.components.securitySchemes : {};
  const flows = isObject(schemes.oauth2) && isObject(schemes.oauth2.flows) ? schemes.oauth2.flows : {};
  const code = isObject(flows.authorizationCode) && isObject(flows.authorizationCode.scopes) ? flows.authorizationCode.scopes : {};
  return Object.fromEntries(Object.entries(code).map(([scope, words]) => [scope, String(words)]));
}

/** generated/operations.ts: the rows, typed, the ids as a union, and the scopes in words. */
export function renderOperationTable(rows: OperationTableRow[], scopes: Record<string, string>): string {
  const ids = [...new Set(rows.map((row) => row.id))];
  return `/**
 * Every operation of the API: its id, method and path template, who may call
 * it (its security alternatives and scope), what its body is, whether it
 * takes an Idempotency-Key, and what of it is deprecated. Concrete paths
 * come before templated ones, in the order the request path tries them
 * (server/http/route.ts). Made by scripts/operation-table.ts from the spec.
 */

export type OperationId =
${ids.map((id) => `  | '${id}'`).join('\n')};

export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

export interface OperationSecurity {
  /** A bearer token (personal or OAuth access token) is taken. */
  readonly token: boolean;
  /** The account's session cookie is taken. */
  readonly session: boolean;
  /** A listener's player session is taken. */
  readonly playerSession: boolean;
  /** A caller with no credential may call it. */
  readonly anonymous: boolean;
  /** The scope a token needs. */
  readonly scope?: string;
}

export interface DeprecationDates {
  readonly what: string;
  readonly since: number;
  readonly sunset?: number;
}

export interface OperationDeprecation {
  readonly operation?: DeprecationDates;
  readonly parameters: readonly (DeprecationDates & { readonly in: string; readonly name: string })[];
  readonly fields: readonly (DeprecationDates & { readonly field: readonly string[] })[];
}

export interface Operation {
  readonly id: OperationId;
  readonly method: Method;
  /** The path template under /api/v1. */
  readonly path: string;
  /** The template's segments: a literal, or \`{name}\` for a parameter. */
  readonly segments: readonly string[];
  readonly templated: number;
  readonly security: OperationSecurity;
  /** \`raw\`: the handler reads the bytes itself; \`json\`: the API parses and validates a JSON body. */
  readonly body: 'json' | 'raw' | 'none';
  /** A protocol of its own (tus 1.0.0), whose handler checks its own headers. */
  readonly protocol?: 'tus';
  readonly idempotencyKey: boolean;
  readonly deprecation?: OperationDeprecation;
  readonly sandboxOnly?: true;
}

export const OPERATIONS: readonly Operation[] = ${JSON.stringify(rows, null, 2)};

/** What each scope lets a credential do, in the spec's words (its \`oauth2\` security scheme). */
export const SCOPE_WORDS: Readonly<Record<string, string>> = ${JSON.stringify(scopes, null, 2)};
`;
}
