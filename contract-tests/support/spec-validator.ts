/**
 * Checks an HTTP response against the bundled spec: the status must be one
 * the operation documents, the content type one it lists for that status,
 * and a JSON body must match the schema (JSON Schema 2020-12, as OpenAPI 3.1
 * uses). Used by the contract suite on every response it receives.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { OPERATIONS } from '../../generated/operations.ts';
import { matchOperation } from '../../server/http/route.ts';

/** The parts of the bundled spec this checker reads; anything may be a `{ $ref }` to elsewhere in it. */
interface Reference {
  $ref?: string;
}
interface HeaderObject extends Reference {
  required?: boolean;
  schema?: unknown;
}
interface ResponseObject extends Reference {
  headers?: Record<string, HeaderObject>;
  content?: Record<string, unknown>;
}
interface OperationObject {
  operationId: string;
  responses: Record<string, ResponseObject>;
}
type PathItem = Partial<Record<string, OperationObject>>;

const spec = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../generated/openapi.json'), 'utf8')) as { paths: Record<string, PathItem> };

// The spec itself is registered as a schema so that "#/components/..." refs resolve inside it.
const ajv = new Ajv2020({ strict: false, allErrors: true });
// ajv-formats is CommonJS; under NodeNext its function is the default export's `default`.
formats.default(ajv);
ajv.addSchema(spec, 'spec');

interface Route {
  operationId: string;
  method: string;
  template: string;
  /** A HEAD answered as its path's GET (RFC 9110 §9.3.2): its answer has that operation's headers and no content. */
  headOfGet?: boolean;
}

export const allOperationIds = OPERATIONS.map((operation) => operation.id as string);
/** Operations that exist only on a sandbox server (`x-sandbox-only` in the spec); elsewhere they answer 404. */
export const sandboxOnlyOperationIds = OPERATIONS.filter((operation) => operation.sandboxOnly).map((operation) => operation.id as string);

/** The operation a request is, by the server's own one match (server/http/route.ts): the suite judges what the server routes. */
export function findRoute(method: string, path: string): Route | undefined {
  const match = matchOperation(method.toUpperCase(), path);
  if (match.kind !== 'operation') return undefined;
  const { operation } = match;
  return { operationId: operation.id, method: operation.method.toLowerCase(), template: operation.path, ...(method.toUpperCase() === 'HEAD' && operation.method === 'GET' ? { headOfGet: true } : {}) };
}

/** A JSON Pointer segment (RFC 6901): `~` as `~0`, `/` as `~1`. */
const pointerSegment = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const compiled = new Map<string, ValidateFunction>();

function validatorFor(pointer: string): ValidateFunction {
  const cached = compiled.get(pointer);
  if (cached) return cached;
  const validate = ajv.compile({ $ref: `spec#${pointer}` });
  compiled.set(pointer, validate);
  return validate;
}

/**
 * Returns the list of ways the response breaks the spec; empty when it
 * conforms. With `headers`, the headers the response documents as required
 * must be present, and match their schema.
 */
export function checkResponse(route: Route, status: number, contentType: string | null, body: unknown, headers?: Headers): string[] {
  const responses = spec.paths[route.template][route.method]!.responses;
  // Not `default`: every operation has one (any other problem), and falling back on it would let
  // any status through. The suite holds the server to the statuses each operation names.
  const key = [String(status), `${String(status)[0]}XX`].find((candidate) => responses[candidate]);
  if (!key) return [`status ${status} is not documented for ${route.operationId} (documented: ${Object.keys(responses).join(', ')})`];
  const responsePointer =
    responses[key].$ref?.slice(1) ?? `/paths/${pointerSegment(route.template)}/${route.method}/responses/${key}`;
  const violations = headers ? checkHeaders(route, status, responsePointer, headers) : [];
  // RFC 9110 §9.3.2: "The server MUST NOT send content in the response" to HEAD; the media type it names is the GET's.
  if (route.method === 'head' || route.headOfGet) return violations;
  const content = resolveRef(responses[key]).content;
  if (!content) return body === undefined ? violations : [...violations, `${route.operationId} ${status} documents no body, but one was sent`];
  const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
  const declared = Object.keys(content).find((candidate) => mediaTypeMatches(candidate, mediaType));
  if (!declared) return [...violations, `${route.operationId} ${status}: content type "${mediaType}" is not one of ${Object.keys(content).join(', ')}`];
  if (!declared.includes('json')) return violations;
  const validate = validatorFor(`${responsePointer}/content/${pointerSegment(declared)}/schema`);
  if (validate(body)) return violations;
  return [...violations, ...(validate.errors ?? []).map((error) => `${route.operationId} ${status}: body${error.instancePath} ${error.message}`)];
}

/** The response's required headers (for example the ETag of a versioned resource) must be sent, each matching its schema. */
function checkHeaders(route: Route, status: number, responsePointer: string, headers: Headers): string[] {
  const documented = resolveRef<ResponseObject>({ $ref: `#${responsePointer}` }).headers ?? {};
  return Object.entries(documented).flatMap(([name, definition]) => {
    const header = resolveRef(definition);
    if (!header.required) return [];
    const value = headers.get(name);
    if (value === null) return [`${route.operationId} ${status}: the required ${name} header is missing`];
    const schemaPointer = definition.$ref ? `${definition.$ref.slice(1)}/schema` : `${responsePointer}/headers/${pointerSegment(name)}/schema`;
    const validate = validatorFor(schemaPointer);
    return validate(value) ? [] : (validate.errors ?? []).map((error) => `${route.operationId} ${status}: header ${name} ${JSON.stringify(value)} ${error.message}`);
  });
}

/** The node a `{ $ref: '#/…' }` points at in the spec; any other node as it is. */
function resolveRef<T extends Reference>(node: T): T {
  if (!node.$ref) return node;
  return node.$ref
    .slice(2)
    .split('/')
    .reduce<unknown>((at, part) => (at as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')], spec) as T;
}

function mediaTypeMatches(declared: string, actual: string): boolean {
  if (declared === '*/*') return true;
  if (declared.endsWith('/*')) return actual.startsWith(declared.slice(0, -1));
  return declared === actual;
}
