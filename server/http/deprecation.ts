/**
 * Deprecation (RFC 9745) and Sunset (RFC 8594), driven by the spec. What the
 * spec marks `deprecated: true` says when with two extensions:
 * `x-deprecated-since` (required: the day it was, or will be, deprecated) and
 * `x-sunset` (optional: the day it stops working), each a date (`2027-07-01`)
 * or a date and time. It may be:
 *
 * - an operation: every answer to it carries the headers;
 * - a parameter (query, header or cookie): the answers to requests that send it;
 * - a field of a request body, at any depth: the answers to requests whose
 *   body holds it. A field is deprecated for what clients send; a response
 *   field marked deprecated is announced in the changelog, not in headers,
 *   since a client that ignores it is not using it.
 *
 * The headers: `Deprecation: @<seconds>` ("Deprecation = sf-date", RFC
 * 9745 §2.1), `Sunset: <HTTP-date>` ("Sunset = HTTP-date", RFC 8594 §3), and
 * `Link` to the changelog with rel="deprecation" (RFC 9745 §3) and
 * rel="sunset" (RFC 8594 §6). A request that uses several deprecated things
 * gets the earliest deprecation and the earliest sunset: the soonest that
 * concerns it.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
const isObject = (value: Json | undefined): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** When something was deprecated and when it stops working, in milliseconds since the epoch. */
export interface Dates {
  since: number;
  sunset?: number;
}

/** One deprecated thing of the spec: what it is (for people), and its dates. */
export interface Deprecation extends Dates {
  what: string;
}

/** What usedBy reads: the deprecations of an operation, as deprecationsOf finds them or as its row holds them. */
interface Deprecations {
  operation?: Deprecation;
  parameters: ReadonlyArray<Deprecation & { in: string; name: string }>;
  fields: ReadonlyArray<Deprecation & { field: readonly string[] }>;
}

/** The deprecations of one operation: itself, its parameters, the fields of its request body. */
export interface OperationDeprecations {
  operationId: string;
  method: string;
  path: string;
  operation?: Deprecation;
  parameters: Array<Deprecation & { in: string; name: string }>;
  /** Each field's path in the body: property names, and `[]` for the items of an array. */
  fields: Array<Deprecation & { field: string[] }>;
}

export class DeprecationSpecError extends Error {
  constructor(problems: string[]) {
    super(`The spec's deprecations are not usable:\n  ${problems.join('\n  ')}`);
    this.name = 'DeprecationSpecError';
  }
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** The date of an extension's value (a YAML date comes out of the bundle as a string or a full ISO time). */
function dateOf(value: Json | undefined): number | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const time = typeof value === 'number' ? value : Date.parse(value);
  return Number.isFinite(time) ? time : undefined;
}

/**
 * Every deprecation of the spec, operation by operation (those with none are
 * left out). Throws, listing them all, when a deprecated thing lacks a usable
 * `x-deprecated-since`, has an unreadable `x-sunset`, or a sunset before its
 * deprecation: RFC 9745 §4, "The timestamp given in the Sunset HTTP header
 * field MUST NOT be earlier than the one given in the Deprecation header
 * field."
 */
export function deprecationsOf(spec: JsonObject): OperationDeprecations[] {
  const problems: string[] = [];
  const resolve = (node: Json | undefined): Json | undefined => {
    const seen = new Set<string>();
    while (isObject(node) && typeof node.$ref === 'string' && node.$ref.startsWith('#/') && !seen.has(node.$ref)) {
      seen.add(node.$ref);
      const target: Json | undefined = node.$ref
        .slice(2)
        .split('/')
        .reduce<Json | undefined>((at, part) => (isObject(at) ? at[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined), spec);
      // OpenAPI 3.1: a $ref's siblings stand beside what it names (a property may be `{ $ref, deprecated: true }`).
      const { $ref: _ref, ...siblings } = node;
      node = isObject(target) ? { ...target, ...siblings } : target;
    }
    return node;
  };
  const datesOf = (node: JsonObject, what: string): Deprecation | undefined => {
    if (node.deprecated !== true) return undefined;
    const since = dateOf(node['x-deprecated-since']);
    const sunset = node['x-sunset'] === undefined ? undefined : dateOf(node['x-sunset']);
    if (since === undefined) problems.push(`${what} is deprecated without a date in x-deprecated-since (for example x-deprecated-since: '2027-01-15')`);
    if (node['x-sunset'] !== undefined && sunset === undefined) problems.push(`${what} has an x-sunset that is not a date: ${JSON.stringify(node['x-sunset'])}`);
    if (since !== undefined && sunset !== undefined && sunset < since) problems.push(`${what} has its sunset (${node['x-sunset']}) before its deprecation (${node['x-deprecated-since']})`);
    return since === undefined ? undefined : { what, since, ...(sunset !== undefined ? { sunset } : {}) };
  };

  /** The deprecated properties under a request body's schema, by path; `stack` ends cycles. */
  const fieldsOf = (schemaAt: Json | undefined, prefix: string[], label: string, stack: Json[] = []): Array<Deprecation & { field: string[] }> => {
    const schema = resolve(schemaAt);
    if (!isObject(schema) || stack.includes(schema) || stack.length > 12) return [];
    const inner = [...stack, schema];
    const found: Array<Deprecation & { field: string[] }> = [];
    for (const keyword of ['allOf', 'oneOf', 'anyOf']) {
      const members = schema[keyword];
      if (Array.isArray(members)) for (const member of members) found.push(...fieldsOf(member, prefix, label, inner));
    }
    if (isObject(schema.properties)) {
      for (const [name, property] of Object.entries(schema.properties)) {
        const resolved = resolve(property);
        if (!isObject(resolved)) continue;
        const field = [...prefix, name];
        const dates = datesOf(resolved, `${label} request field ${field.join('.').replace(/\.\[\]/g, '[]')}`);
        if (dates) found.push({ ...dates, field });
        found.push(...fieldsOf(resolved, field, label, inner));
      }
    }
    if (schema.items !== undefined) found.push(...fieldsOf(schema.items, [...prefix, '[]'], label, inner));
    return found;
  };

  const operations: OperationDeprecations[] = [];
  for (const [path, itemAt] of Object.entries(isObject(spec.paths) ? spec.paths : {})) {
    const item = resolve(itemAt);
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      const operationId = typeof operation.operationId === 'string' ? operation.operationId : `${method.toUpperCase()} ${path}`;
      const label = `${operationId} (${method.toUpperCase()} ${path})`;
      const found: OperationDeprecations = { operationId, method: method.toUpperCase(), path, parameters: [], fields: [] };
      const own = datesOf(operation, `the operation ${label}`);
      if (own) found.operation = own;
      for (const list of [item.parameters, operation.parameters]) {
        if (!Array.isArray(list)) continue;
        for (const parameterAt of list) {
          const parameter = resolve(parameterAt);
          if (!isObject(parameter) || typeof parameter.name !== 'string' || typeof parameter.in !== 'string') continue;
          const dates = datesOf(parameter, `${label} ${parameter.in} parameter ${parameter.name}`);
          if (dates) found.parameters.push({ ...dates, in: parameter.in, name: parameter.name });
        }
      }
      const body = resolve(operation.requestBody);
      if (isObject(body) && isObject(body.content)) {
        const seen = new Set<string>();
        for (const media of Object.values(body.content)) {
          if (!isObject(media)) continue;
          for (const field of fieldsOf(media.schema, [], label)) {
            if (seen.has(field.field.join('.'))) continue;
            seen.add(field.field.join('.'));
            found.fields.push(field);
          }
        }
      }
      if (found.operation || found.parameters.length > 0 || found.fields.length > 0) operations.push(found);
    }
  }
  if (problems.length > 0) throw new DeprecationSpecError(problems);
  return operations;
}

/** Whether the body holds a value at `field` (any item of an array, for `[]`). */
function holds(value: unknown, field: readonly string[]): boolean {
  if (field.length === 0) return value !== undefined;
  const [head, ...rest] = field;
  if (head === '[]') return Array.isArray(value) && value.some((item) => holds(item, rest));
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, head) && holds((value as Record<string, unknown>)[head], rest);
}

/** What of `operation`'s deprecations this request uses. */
export function usedBy(req: Pick<Request, 'query' | 'body' | 'get' | 'headers'>, operation: Pick<Deprecations, 'operation' | 'parameters' | 'fields'>): Deprecation[] {
  const used: Deprecation[] = operation.operation ? [operation.operation] : [];
  for (const parameter of operation.parameters) {
    const sent =
      parameter.in === 'query'
        ? req.query?.[parameter.name] !== undefined
        : parameter.in === 'header'
          ? req.get(parameter.name) !== undefined
          : parameter.in === 'cookie'
            ? new RegExp(`(?:^|;\\s*)${parameter.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}=`).test(req.headers.cookie ?? '')
            : true;
    if (sent) used.push(parameter);
  }
  for (const field of operation.fields) if (holds(req.body, field.field)) used.push(field);
  return used;
}

/** The headers that announce `used`: the earliest deprecation, the earliest sunset, and the changelog's links. */
export function deprecationHeadersFor(used: Dates[], changelog: string): Record<string, string> {
  const since = Math.min(...used.map((item) => item.since));
  const sunsets = used.flatMap((item) => (item.sunset === undefined ? [] : [item.sunset]));
  const sunset = sunsets.length > 0 ? Math.min(...sunsets) : undefined;
  // RFC 9745 §2.1: "Deprecation = sf-date"; RFC 9651 §3.3.7: "Dates have a data model that is similar to Integers, representing a
  // (possibly negative) delta in seconds from 1970-01-01T00:00:00Z", serialised as "@" and the integer.
  const headers: Record<string, string> = { Deprecation: `@${Math.floor(since / 1000)}` };
  // RFC 8594 §3: "Sunset = HTTP-date"; toUTCString writes the IMF-fixdate form of RFC 9110 §5.6.7.
  if (sunset !== undefined) headers.Sunset = new Date(sunset).toUTCString();
  // RFC 9745 §3: the "deprecation" link relation; RFC 8594 §6: the "sunset" link relation.
  headers.Link = [`<${changelog}>; rel="deprecation"; type="text/html"`, ...(sunset !== undefined ? [`<${changelog}>; rel="sunset"; type="text/html"`] : [])].join(', ');
  return headers;
}

/**
 * The middleware: for a request to a deprecated operation, or that uses a
 * deprecated parameter or field, the headers, set before the handler runs
 * (so that refusals carry them too). Mounted in the API router after the body
 * parser; what the operation deprecates is its row's (generated/operations.ts,
 * made by deprecationsOf at generate time), for the operation the request
 * path matched (req.operation).
 */
export function deprecationHeaders(changelog = '/docs/changelog#deprecations'): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const deprecation = req.operation?.deprecation;
    if (deprecation) {
      const used = usedBy(req, deprecation);
      if (used.length > 0) {
        for (const [name, value] of Object.entries(deprecationHeadersFor(used, changelog))) {
          if (name === 'Link') res.append('Link', value);
          else res.setHeader(name, value);
        }
      }
    }
    next();
  };
}
