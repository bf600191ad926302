/**
 * The one match of a request to its operation. Every API request is
 * resolved here, once, to a row of the operation table
 * (generated/operations.ts) and its path parameters; authentication,
 * validation, deprecation headers, idempotency, `405 Allow` and dispatch all
 * read that match (`req.operation`, `req.params`), and nothing matches the
 * request again. A request that matches no operation is answered 404 here,
 * before any credential is looked at: there is no "any token" fallback for a
 * path the API does not know.
 *
 * The match is exact:
 * - case-sensitive: RFC 3986 §6.2.2.1, "The other generic syntax components
 *   are assumed to be case-sensitive unless specifically defined otherwise
 *   by the scheme", and http(s) defines nothing else for the path;
 * - no empty segment (`//`, a trailing `/`) and no dot-segment (`.`, `..`,
 *   nor their percent-encodings): RFC 3986 §3.3, dot-segments "are intended
 *   for use at the beginning of a relative-path reference" and mean
 *   navigation, never an id;
 * - a literal segment matches only as written (`%70layers` is not `players`);
 * - concrete paths before templated ones (OpenAPI 3.1, Paths Object: "When
 *   matching URLs, concrete (non-templated) paths would be matched before
 *   their templated counterparts"), the path first and then the method, so
 *   that `POST …/comments/export` is 405, not an update of comment "export".
 */
import type { NextFunction, Request, Response } from 'express';
import { OPERATIONS, type Method, type Operation } from '../../generated/operations.ts';
import { HttpProblem, notFound } from '../lib/problems.ts';

export type { Method, Operation };

/** One path template of the spec and its operations by method. */
interface PathRoute {
  segments: readonly string[];
  methods: Map<string, Operation>;
}

export type RouteMatch =
  | { kind: 'operation'; operation: Operation; params: Record<string, string> }
  /** The path is the API's, the method is not one of its operations. */
  | { kind: 'method-not-allowed'; allow: string[] }
  | { kind: 'not-found' }
  /** A segment's percent-encoding does not decode (a lone `%`, `%FF`). */
  | { kind: 'bad-escape' };

/** The table's paths, by their number of segments, most concrete first (the table's own order). */
function indexOf(operations: readonly Operation[]): Map<number, PathRoute[]> {
  const byPath = new Map<string, PathRoute>();
  for (const operation of operations) {
    let route = byPath.get(operation.path);
    if (!route) byPath.set(operation.path, (route = { segments: operation.segments, methods: new Map() }));
    route.methods.set(operation.method, operation);
  }
  const index = new Map<number, PathRoute[]>();
  for (const route of byPath.values()) {
    const list = index.get(route.segments.length) ?? [];
    list.push(route);
    index.set(route.segments.length, list);
  }
  return index;
}

const isDotSegment = (segment: string) => segment === '.' || segment === '..';

/** Builds the matcher of a table (the generated one by default; tests pass their own). */
export function operationMatcher(operations: readonly Operation[] = OPERATIONS) {
  const index = indexOf(operations);
  return function matchOperation(method: string, path: string): RouteMatch {
    if (path.length < 2 || path.charCodeAt(0) !== 47) return { kind: 'not-found' };
    const raw = path.slice(1).split('/');
    const decoded: string[] = new Array(raw.length);
    for (let i = 0; i < raw.length; i++) {
      const segment = raw[i];
      if (segment === '' || isDotSegment(segment)) return { kind: 'not-found' };
      if (segment.includes('%')) {
        try {
          decoded[i] = decodeURIComponent(segment);
        } catch {
          return { kind: 'bad-escape' };
        }
        if (isDotSegment(decoded[i])) return { kind: 'not-found' };
      } else {
        decoded[i] = segment;
      }
    }
    for (const route of index.get(raw.length) ?? []) {
      let matches = true;
      for (let i = 0; i < raw.length && matches; i++) {
        const template = route.segments[i];
        if (template.charCodeAt(0) !== 123 /* { */ && template !== raw[i]) matches = false;
      }
      if (!matches) continue;
      // RFC 9110 §9.3.2: "The HEAD method is identical to GET except that the server MUST NOT send content in the
      // response": a HEAD is its path's GET unless the spec has a HEAD of its own (tus's, which reads an offset).
      const operation = route.methods.get(method) ?? (method === 'HEAD' ? route.methods.get('GET') : undefined);
      if (!operation) return { kind: 'method-not-allowed', allow: allowOf(route) };
      const params: Record<string, string> = {};
      for (let i = 0; i < raw.length; i++) {
        const template = route.segments[i];
        if (template.charCodeAt(0) === 123) params[template.slice(1, -1)] = decoded[i];
      }
      return { kind: 'operation', operation, params };
    }
    return { kind: 'not-found' };
  };
}

/** RFC 9110 §10.2.1: "The Allow header field lists the set of methods advertised as supported by the target resource." */
function allowOf(route: PathRoute): string[] {
  const methods = [...route.methods.keys()];
  if (methods.includes('GET') && !methods.includes('HEAD')) methods.push('HEAD');
  return methods;
}

/** The generated table's matcher. */
export const matchOperation = operationMatcher();

/** The API path's operation for `method`, by id: the table's row, or undefined. */
export const operationById = (() => {
  const byId = new Map<string, Operation>(OPERATIONS.map((operation) => [operation.id, operation]));
  return (id: string) => byId.get(id);
})();

/** The problem a request that matched no operation gets. */
export function unmatchedProblem(match: Exclude<RouteMatch, { kind: 'operation' }>, method: string, path: string): HttpProblem {
  switch (match.kind) {
    case 'method-not-allowed':
      // RFC 9110 §15.5.6: "The origin server MUST generate an Allow header field in a 405 response containing a list of
      // the target resource's currently supported methods."
      return new HttpProblem('method-not-allowed', `${path} does not take ${method}; it takes ${match.allow.join(', ')}. See the API reference at /docs.`, {
        headers: { Allow: match.allow.join(', ') },
      });
    case 'bad-escape':
      return new HttpProblem('validation-error', 'The URL holds a malformed percent-encoding (such as %FF or a lone %). Encode the path as UTF-8.', {
        errors: [{ detail: 'the path must be valid percent-encoded UTF-8' }],
      });
    case 'not-found':
      return notFound(`There is no operation at ${method} /api/v1${path}. Paths are case-sensitive, with no trailing slash; see the API reference at /docs.`);
  }
}

/**
 * The API router's first middleware: the request's operation, or its refusal. Mounted before authentication, so
 * that a path the API does not have is answered 404 without a credential being read.
 */
export function routeOperations(match: (method: string, path: string) => RouteMatch = matchOperation) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const found = match(req.method, req.path);
    if (found.kind !== 'operation') return next(unmatchedProblem(found, req.method, req.path));
    req.operation = found.operation;
    req.pathParams = found.params;
    next();
  };
}
