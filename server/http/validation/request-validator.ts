/**
 * Request validation: each operation's validators, compiled once with Ajv
 * from the bundled spec (request-schemas.ts), run on the request path's one
 * match (`req.operation`, http/route.ts).
 *
 * What they check and coerce, and every refusal's status, field path and
 * message, are express-openapi-validator 5.6's for the same request (the
 * reference the architecture names, which still validates every response
 * in tests): the same Ajv (2020-12) with the same options, the same
 * schemas, and its checks before Ajv (the body's media type, reserved
 * characters in query values, unknown and empty query parameters), in its
 * order. difference.test.ts sends the same requests through both and fails
 * on any difference. What this leaves out is the library's Express glue:
 * its own route lookup, router layers and promise hops, `url.parse`, and
 * redefining `req.query` on every request (issue 32's profile: 21–33 µs of
 * its 0.25 µs-of-Ajv request).
 */
import { readFileSync } from 'node:fs';
import type { NextFunction, Request, Response } from 'express';
import express from 'express';
import { Ajv2020, type ErrorObject, type Options, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { requestSchemasOf, type ApiDocument, type BodyContent, type OperationSchemas, type Schema } from './request-schemas.ts';

/** One field's fault, as express-openapi-validator words it: `/query/limit`, `/body/name`, `/headers/upload-length`. */
export interface FieldFault {
  path: string;
  message: string;
  errorCode?: string;
}

/**
 * A request the spec refuses: the shape http/errors.ts turns into a problem (`status`, `errors`), with the media
 * types the operation's body takes, so that a 415 says what to send instead.
 */
export class RequestRefused extends Error {
  readonly status: 400 | 415;
  readonly errors: FieldFault[];
  readonly accepts: string[];
  constructor(status: 400 | 415, errors: FieldFault[], accepts: string[] = []) {
    super(errors.map((fault) => `${fault.path} ${fault.message}`).join('; '));
    this.status = status;
    this.errors = errors;
    this.accepts = accepts;
  }
}

/** What a validator reads of a request, and coerces in place (the query, path parameters, headers and body objects). */
export interface RequestParts {
  /** The request target as received (`req.originalUrl`): its raw query is checked for reserved characters. */
  url: string;
  query: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  params: Record<string, string>;
  body: unknown;
}

// express-openapi-validator's formats (framework/ajv/formats.js), for the numeric and binary formats ajv-formats lacks.
const INT32 = [-(2 ** 31), 2 ** 31 - 1];
const INT64 = [-(2 ** 63), 2 ** 63 - 1];
const MAX_FLOAT = (2 - 2 ** -23) * 2 ** 127;
const MIN_POSITIVE_FLOAT = 2 ** -126;
const base64 = /^[A-Za-z0-9+/]*(=|==)?$/;
const OPENAPI_FORMATS = {
  int32: { type: 'number', validate: (i: number) => Number.isInteger(i) && i <= INT32[1] && i >= INT32[0] },
  int64: { type: 'number', validate: (i: number) => Number.isInteger(i) && i <= INT64[1] && i >= INT64[0] },
  float: { type: 'number', validate: (i: number) => i === 0 || (i <= MAX_FLOAT && i >= MIN_POSITIVE_FLOAT) || (i >= -MAX_FLOAT && i <= -MIN_POSITIVE_FLOAT) },
  double: { type: 'number', validate: (i: number) => typeof i === 'number' },
  byte: (b: string) => b.length % 4 === 0 && base64.test(b),
  binary: true,
  password: true,
} as const;

/**
 * The validator's Ajv (framework/ajv/options.js and index.js): JSON Schema 2020-12 for OpenAPI 3.1, its base options,
 * allErrors as the server asks for it (a request with several faults is told of all of them at once), defaults filled
 * in, and `readOnly` refused in requests. `coerceTypes` for parameters (all arrive as text), never for bodies.
 */
function requestAjv(coerceTypes: boolean, components: Record<string, Schema>): Ajv2020 {
  const options: Options = {
    strict: false,
    strictNumbers: true,
    strictTuples: true,
    allowUnionTypes: false,
    validateSchema: false,
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    validateFormats: true,
    allErrors: true,
  };
  const ajv = new Ajv2020(options);
  // OpenAPI 3.1's media-range "is not really intended to be validated" (OAI/OpenAPI-Specification#2714).
  ajv.addFormat('media-range', true);
  for (const [name, format] of Object.entries(OPENAPI_FORMATS)) ajv.addFormat(name, format as never);
  formats.default(ajv, { mode: 'fast' });
  ajv.removeKeyword('readOnly');
  ajv.addKeyword({
    keyword: 'readOnly',
    errors: true,
    compile: (readOnly: boolean, _parent, it) => {
      if (!readOnly) return () => true;
      // As the validator's: a read-only property sent in a request is refused, even as null (then without a message).
      const validate: ((data: unknown, context?: { instancePath: string; parentDataProperty: string | number }) => boolean) & { errors?: ErrorObject[] } = (data, context) => {
        if (data != null) {
          validate.errors = [{ keyword: 'readOnly', instancePath: context?.instancePath ?? '', schemaPath: it.schemaPath.str, message: 'is read-only', params: { writeOnly: context?.parentDataProperty } }];
        }
        return false;
      };
      return validate;
    },
  });
  for (const [name, schema] of Object.entries(components)) ajv.addSchema(schema, `#/components/schemas/${name}`);
  return ajv;
}

/** A Content-Type as the validator reads it (middlewares/util.js, ContentType). */
class MediaType {
  readonly mediaType: string | undefined;
  readonly parameters: Record<string, string> = {};
  constructor(header: string | undefined) {
    this.mediaType = undefined;
    if (!header) return;
    for (const [, key, value] of header.matchAll(/;\s*([^=]+)=([^;]+)/g)) {
      // RFC 2046 §4.1.2: the charset parameter's value is case-insensitive.
      this.parameters[key.toLowerCase()] = key.toLowerCase() === 'charset' ? value.toLowerCase() : value;
    }
    this.mediaType = header.split(';')[0].toLowerCase().trim();
  }
  normalize(excluded: string[] = ['boundary']): string | undefined {
    if (!this.mediaType) return undefined;
    let parameters = '';
    for (const key of Object.keys(this.parameters).sort()) if (!excluded.includes(key)) parameters += `; ${key}=${this.parameters[key]}`;
    return this.mediaType + parameters;
  }
  equivalents(): MediaType[] {
    if (!this.mediaType) return [];
    const types = [new MediaType(this.mediaType)];
    if (!this.parameters.charset) types.push(new MediaType(`${this.normalize(['charset'])}; charset=utf-8`));
    return types;
  }
}

/** An operation's declared body media types, each normalised, and the wildcard ones in the order they are tried. */
interface DeclaredContents {
  contents: Array<BodyContent & { normalized: string | undefined }>;
  /** `*` + `/` + `*`, or `type/` + `*` as a pattern, in reverse order of their names (the validator's). */
  wildcards: Array<{ content: BodyContent; pattern: RegExp | undefined }>;
  required: boolean;
  mediaTypes: string[];
}

function declaredContents(declared: BodyContent[], required: boolean): DeclaredContents {
  // One object per declared media type, whichever way a request matches it: the compiled validators are kept by it.
  const contents = declared.map((content) => ({ ...content, normalized: new MediaType(content.mediaType).normalize() }));
  const byNameDescending = [...contents].sort((a, b) => (a.mediaType < b.mediaType ? 1 : a.mediaType > b.mediaType ? -1 : 0));
  return {
    contents,
    wildcards: byNameDescending
      .filter(({ mediaType }) => mediaType === '*/*' || /^[a-z]+\/\*$/.test(mediaType))
      .map((content) => ({ content, pattern: content.mediaType === '*/*' ? undefined : new RegExp(`^${content.mediaType.split('/', 1)[0]}/.+$`) })),
    required,
    mediaTypes: contents.map(({ mediaType }) => mediaType),
  };
}

/** The declared content a request of this Content-Type is validated as (body.parse.js, toSchema), or a 415. */
function contentFor(declared: DeclaredContents, header: string | undefined, path: string): BodyContent | 'none' {
  const sent = new MediaType(header);
  const normalized = sent.normalize();
  const exact = declared.contents.find((content) => content.normalized === normalized);
  if (exact) return exact;
  const equivalents = sent.equivalents().map((type) => type.normalize());
  const equivalent = declared.contents.find((content) => equivalents.includes(content.normalized));
  if (equivalent) return equivalent;
  for (const { content, pattern } of declared.wildcards) if (!pattern || pattern.test(String(normalized))) return content;
  if (normalized === undefined && !declared.required) return 'none';
  throw new RequestRefused(415, [{ path, message: `unsupported media type ${normalized}` }], declared.mediaTypes);
}

/** RFC 3986 §2.2's reserved characters (the validator's RESERVED_CHARS). */
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;

/** The query as sent, undecoded, by name (the validator's parseQueryStringUndecoded over `url.parse(url).query`). */
function rawQueryOf(url: string): Map<string, Array<string | undefined>> | undefined {
  const start = url.indexOf('?');
  if (start < 0) return undefined;
  const end = url.indexOf('#', start);
  const query = url.slice(start + 1, end < 0 ? undefined : end);
  if (!query) return undefined;
  const values = new Map<string, Array<string | undefined>>();
  for (const pair of query.split('&')) {
    const [key, value] = pair.split('=');
    let list = values.get(key);
    if (!list) values.set(key, (list = []));
    list.push(value);
  }
  return values;
}

/** express-openapi-validator's wording of Ajv's errors (util.js, augmentAjvErrors and ajvErrorsToValidatorError). */
function faultsOf(errors: ErrorObject[]): FieldFault[] {
  return errors.map((error) => {
    const params = error.params as Record<string, unknown>;
    const message = error.keyword === 'enum' && params.allowedValues ? `${error.message}: ${(params.allowedValues as unknown[]).join(', ')}` : error.message;
    const at = (name: unknown) => (name ? `${error.instancePath}/${name}` : undefined);
    const path = at(params.missingProperty) ?? at(params.additionalProperty) ?? at(params.unevaluatedProperty) ?? error.instancePath ?? error.schemaPath;
    return { path, message: message as string, errorCode: `${error.keyword}.openapi.validation` };
  });
}

interface Compilers {
  parameters(schema: Schema): ValidateFunction;
  body(schema: Schema): ValidateFunction;
}

/** One operation's compiled validators. */
class OperationValidator {
  /**
   * By the declared media type the request's Content-Type matched, not by the Content-Type as sent: a client that
   * varies its header's parameters (`; x=1`, `; x=2`, …) must not make a compile and a map entry of each.
   */
  private readonly bodies = new Map<BodyContent, ValidateFunction>();
  private readonly schemas: OperationSchemas;
  private readonly declared: DeclaredContents | undefined;
  private readonly compile: Compilers;
  private generalValidator: ValidateFunction | undefined;
  constructor(schemas: OperationSchemas, compile: Compilers) {
    this.schemas = schemas;
    this.declared = schemas.requestBody && declaredContents(schemas.requestBody.contents, schemas.requestBody.required);
    this.compile = compile;
  }

  /** Compiled on first use, as the validator does: a process that serves a few operations compiles only theirs. */
  private get general(): ValidateFunction {
    return (this.generalValidator ??= this.compile.parameters(this.schemas.general));
  }

  /** The body's validator for this Content-Type, compiled on the first request of its declared media type. */
  private bodyValidator(header: string | undefined): ValidateFunction | 'none' {
    if (!this.declared) return 'none';
    const content = contentFor(this.declared, header, this.schemas.path);
    if (content === 'none') return 'none';
    let validator = this.bodies.get(content);
    if (!validator) this.bodies.set(content, (validator = this.compile.body(content.schema)));
    return validator;
  }

  /** Validates and coerces `parts` in place (`parts.body` may be replaced); throws RequestRefused. */
  validate(parts: RequestParts): void {
    const contentType = parts.headers['content-type'] as string | undefined;
    const bodyValidator = this.bodyValidator(contentType);
    // The validator's multipart rule: a form body it did not parse is validated as an empty object.
    if (parts.body === undefined && contentType && new MediaType(contentType).mediaType === 'multipart/form-data') parts.body = {};
    const { query } = parts;
    // The validator's RequestParameterMutator: a form-style, exploded query value must not hold reserved characters as
    // sent (RFC 3986 §3.4: they delimit; as data they are percent-encoded).
    if (this.schemas.reservedCheckedQueryNames.length > 0) {
      const raw = rawQueryOf(parts.url);
      if (raw) {
        for (const name of this.schemas.reservedCheckedQueryNames) {
          for (const value of raw.get(name) ?? []) {
            if (value && RESERVED.test(value)) throw new RequestRefused(400, [{ path: `/query/${name}`, message: `Parameter '${name}' must be url encoded. Its value may not contain reserved characters.` }]);
          }
        }
      }
    }
    // Bracket notation (`limit[x]=1`, qs's): the validator parses it into an object under the name before the
    // bracket. Every parameter here is a scalar, so such a value is refused by its type whatever its inner shape;
    // a key that begins with `[` names nothing and is dropped, as there.
    for (const key of Object.keys(query)) {
      if (!key.includes('[')) continue;
      const name = key.split('[')[0];
      delete query[key];
      if (name !== '') query[name] = {};
    }
    for (const name of Object.keys(query)) {
      if (!this.schemas.queryNames.has(name)) throw new RequestRefused(400, [{ path: `/query/${name}`, message: `Unknown query parameter '${name}'` }]);
      if (query[name] === '') throw new RequestRefused(400, [{ path: `/query/${name}`, message: `Empty value found for query parameter '${name}'` }]);
    }
    const data = { query, headers: parts.headers, params: parts.params, cookies: undefined, body: parts.body };
    const general = this.general;
    const valid = general(data);
    const validBody = bodyValidator === 'none' || bodyValidator(data);
    if (valid && validBody) return;
    const errors = [...(general.errors ?? []), ...(bodyValidator !== 'none' ? (bodyValidator.errors ?? []) : [])];
    throw new RequestRefused(400, faultsOf(errors));
  }
}

export type RequestValidators = ReadonlyMap<string, OperationValidator>;

/**
 * Every operation's validators, by operation id, from `doc` (the bundled spec). The schemas are made, and the spec's
 * features checked, at once; each validator is compiled on its first request.
 */
export function compileRequestValidators(doc: ApiDocument): RequestValidators {
  const { components, operations } = requestSchemasOf(doc);
  let ajv: { parameters: Ajv2020; bodies: Ajv2020 } | undefined;
  const ajvs = () => (ajv ??= { parameters: requestAjv(true, components), bodies: requestAjv(false, components) });
  const compile: Compilers = {
    parameters: (schema) => ajvs().parameters.compile(schema),
    body: (schema) => {
      // The validator's _schemaBody: `{ body }`, required when the body's schema lists required properties.
      const binary = schema.format === 'binary';
      return ajvs().bodies.compile({ properties: { query: {}, headers: {}, params: {}, cookies: {}, body: binary ? {} : schema }, ...(schema.required && !binary ? { required: ['body'] } : {}) });
    },
  };
  return new Map(operations.map((schemas) => [schemas.operationId, new OperationValidator(schemas, compile)]));
}

const compiledFor = new Map<string, RequestValidators>();

/** The validators of the bundled spec at `specPath`, made once per process (every app a test makes shares them). */
export function requestValidatorsOf(specPath: string): RequestValidators {
  let validators = compiledFor.get(specPath);
  if (!validators) compiledFor.set(specPath, (validators = compileRequestValidators(JSON.parse(readFileSync(specPath, 'utf8')) as ApiDocument)));
  return validators;
}

const queryOf = Object.getOwnPropertyDescriptor(express.request, 'query')?.get;
const QUERY = Symbol('query');
const withQueryOnce = new WeakSet<object>();

/**
 * Express 5 parses `req.query` anew on every read (a getter), so what the validator coerces would not stay. The
 * query is parsed once per request instead, by a getter defined once on the app's request prototype (not on each
 * request, as express-openapi-validator does), and a handler reads the values the validator coerced.
 */
function parseQueryOnce(req: Request): void {
  const prototype = Object.getPrototypeOf(req) as object;
  if (withQueryOnce.has(prototype)) return;
  if (!queryOf) throw new Error('express.request has no query getter: update server/http/validation/request-validator.ts for this Express.');
  Object.defineProperty(prototype, 'query', {
    configurable: true,
    enumerable: true,
    get(this: Request & { [QUERY]?: unknown }) {
      if (this[QUERY] === undefined) this[QUERY] = queryOf.call(this);
      return this[QUERY];
    },
    set(this: Request & { [QUERY]?: unknown }, value: unknown) {
      this[QUERY] = value;
    },
  });
  withQueryOnce.add(prototype);
}

/** The middleware: validates the matched operation's request (after the body parser), or refuses it. */
export function validateRequests(validators: RequestValidators) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const operation = req.operation;
    const validator = operation && validators.get(operation.id);
    // Unreachable while route.ts runs first and the table and the bundle are made from one spec; a bug if not.
    if (!validator) return next(new Error(`${req.method} ${req.path} reached validation without a matched operation of the bundled spec`));
    parseQueryOnce(req);
    req.params = req.pathParams ?? {};
    const parts: RequestParts = { url: req.originalUrl, query: req.query as Record<string, unknown>, headers: req.headers, params: req.params as Record<string, string>, body: req.body };
    try {
      validator.validate(parts);
    } catch (error) {
      return next(error);
    } finally {
      req.body = parts.body;
    }
    next();
  };
}
