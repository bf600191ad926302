/**
 * What is wrong with a request, said as the real server says it.
 *
 * The server refuses bad input with express-openapi-validator, whose errors
 * (`{ status, errors: [{ path: '/body/name', message }] }`) its error handler
 * turns into problems (server/http/errors.ts `toProblem`). The mock finds the
 * faults with Prism, whose diagnostics say the same things in another shape
 * (`{ path: ['body', 'name'], message: 'Request body property name must be
 * string' }`). This module rewrites Prism's diagnostics into the validator's
 * shape and hands them to the server's own `toProblem`, so that statuses,
 * `type` URIs, details and `errors` entries come out of one piece of code.
 *
 * Two checks Prism does not make, the server's validator does, in this
 * order, before it validates parameters and body: the request's media type
 * (415) and query parameters the operation does not declare (400). They are
 * made here the way the validator makes them.
 */
import { HttpProblem } from '../server/lib/problems.ts';
import { toProblem } from '../server/http/errors.ts';
import { refused } from './prefer.ts';

/** The parts of a Prism operation (an `IHttpOperation` of @stoplight/types) that the mock reads. */
export interface MockOperation {
  iid?: string;
  method: string;
  path: string;
  security?: unknown[][];
  request?: {
    path?: Array<{ name: string; examples?: Array<{ key: string; value?: unknown }> }>;
    query?: Array<{ name: string }>;
    headers?: Array<{ name: string }>;
    body?: { required?: boolean; contents?: Array<{ mediaType: string }> };
  };
  responses: Array<{ code: string; contents?: Array<{ mediaType: string; examples?: Array<{ key: string; value?: unknown }> }> }>;
}

/** A Prism diagnostic (`IPrismDiagnostic` of @stoplight/prism-core). */
export interface PrismDiagnostic {
  path?: Array<string | number>;
  code?: string | number;
  message: string;
  /** DiagnosticSeverity of @stoplight/types: 0 is Error; warnings and hints are not faults. */
  severity: number;
}

/** One error as express-openapi-validator reports it. */
interface ValidatorFieldError {
  path: string;
  message: string;
}

function asProblem(status: number, errors: ValidatorFieldError[], accepts: string[] = []): HttpProblem {
  const problem = toProblem({ status, message: '', errors }, accepts);
  if (!problem) throw new Error(`server/http/errors.ts toProblem gave no problem for a validator error of status ${status}`);
  return problem;
}

/**
 * express-openapi-validator's media type check (middlewares/parsers/body.parse.js):
 * the request's type must be one the operation declares (its parameters set
 * aside), `type/*` takes any subtype, and `*\/*` anything, even no type.
 * Its message names the Express form of the route and the normalised type.
 */
export function contentTypeFault(operation: MockOperation, contentType: string | undefined): HttpProblem | undefined {
  const contents = operation.request?.body?.contents ?? [];
  if (contents.length === 0) return undefined;
  const sent = normalise(contentType);
  const sentType = mediaTypeOf(contentType);
  const accepted = contents.some(({ mediaType }) => {
    const declared = mediaType.toLowerCase();
    if (declared === '*/*') return true;
    if (/^[a-z]+\/\*$/.test(declared)) return sent !== undefined && new RegExp(`^${declared.split('/')[0]}/.+$`).test(sent);
    return sentType === mediaTypeOf(declared);
  });
  if (accepted) return undefined;
  if (sent === undefined && operation.request?.body?.required === false) return undefined;
  const expressRoute = '/api/v1' + operation.path.replace(/\{([^}]+)\}/g, ':$1');
  // The validator writes an absent type as "undefined"; so does the mock, to say the same as the server.
  return asProblem(415, [{ path: expressRoute, message: `unsupported media type ${sent}` }], contents.map(({ mediaType }) => mediaType));
}

/** The media type without parameters, lower case: what a declared type is compared with. */
function mediaTypeOf(contentType: string | undefined): string | undefined {
  const type = contentType?.split(';')[0].trim().toLowerCase();
  return type || undefined;
}

/** The validator's ContentType.normalize(): the media type, then its parameters but `boundary`, sorted, `charset` in lower case. */
function normalise(contentType: string | undefined): string | undefined {
  const mediaType = mediaTypeOf(contentType);
  if (!contentType || !mediaType) return undefined;
  const parameters: Record<string, string> = {};
  for (const [, key, value] of contentType.matchAll(/;\s*([^=]+)=([^;]+)/g)) {
    parameters[key.toLowerCase()] = key.toLowerCase() === 'charset' ? value.toLowerCase() : value;
  }
  return (
    mediaType +
    Object.keys(parameters)
      .sort()
      .filter((key) => key !== 'boundary')
      .map((key) => `; ${key}=${parameters[key]}`)
      .join('')
  );
}

/** express-openapi-validator with allowUnknownQueryParameters: false refuses the first query parameter the operation does not declare, and only it. */
export function unknownQueryFault(operation: MockOperation, names: string[]): HttpProblem | undefined {
  const known = new Set((operation.request?.query ?? []).map((parameter) => parameter.name));
  const unknown = names.find((name) => !known.has(name));
  if (unknown === undefined) return undefined;
  return asProblem(400, [{ path: `/query/${unknown}`, message: `Unknown query parameter '${unknown}'` }]);
}

/**
 * The upload portal's tus 1.0.0: a request without the `Tus-Resumable` the
 * server speaks is refused with 412 and `Tus-Version` (the spec's
 * TusVersionUnsupported), not with the 400 of any missing header, as the
 * server refuses it (server/resources/portal/portal-tus.ts checkTusHeaders):
 * before its other headers and its body, after a malformed path id.
 */
export function tusVersionFault(operation: MockOperation, resumable: string | undefined, diagnostics: PrismDiagnostic[]): HttpProblem | undefined {
  if (!operation.request?.headers?.some((parameter) => parameter.name.toLowerCase() === 'tus-resumable') || resumable === '1.0.0') return undefined;
  if (diagnostics.some((diagnostic) => diagnostic.severity === 0 && diagnostic.path?.[0] === 'path')) return undefined;
  return new HttpProblem('precondition-failed', `Send Tus-Resumable: 1.0.0, the version of the tus protocol this server speaks${resumable ? `; got ${resumable}` : ''}.`, {
    headers: { 'Tus-Version': '1.0.0' },
    errors: [{ header: 'tus-resumable', detail: 'must be 1.0.0' }],
  });
}

/** Prism's locations, named as the validator names them in its paths. */
const locations: Record<string, string> = { body: 'body', header: 'headers', query: 'query', path: 'path' };

/**
 * Prism's request diagnostics as the validator's errors. Prism writes each
 * message as "Request <location> [property|parameter <a.b> ]<ajv message>"
 * (prism-http validator/validators/utils.js convertAjvErrors), with the
 * offending property of `required` and `additionalProperties` only in the
 * message; the validator puts that property at the end of the path. So:
 * `['body'] "Request body must NOT have additional properties; found 'colour'"`
 * becomes `/body/colour "must NOT have additional properties"`.
 */
export function validatorErrorOf(diagnostic: PrismDiagnostic): ValidatorFieldError {
  const [location, ...rest] = (diagnostic.path ?? []).map(String);
  if (location === undefined) {
    // Prism's only diagnostic without a path: a required body that is absent or empty.
    if (/body parameter is required/i.test(diagnostic.message)) return { path: '/body', message: 'is required: this operation takes a request body, and none was sent' };
    return { path: '', message: diagnostic.message };
  }
  const source = `Request ${location} ` + (rest.length > 0 ? `${location === 'body' ? 'property' : 'parameter'} ${rest.join('.')} ` : '');
  let message = diagnostic.message.startsWith(source) ? diagnostic.message.slice(source.length) : diagnostic.message;
  const required = /^must have required property '(.+)'$/.exec(message);
  const additional = /^(must NOT have additional properties); found '(.+)'$/.exec(message);
  const unevaluated = /^(must NOT have unevaluated properties): '(.+)'$/.exec(message);
  const named = additional ?? unevaluated;
  if (required) rest.push(required[1]);
  if (named) {
    message = named[1];
    rest.push(named[2]);
  }
  return { path: `/${locations[location] ?? location}${rest.length > 0 ? '/' + rest.join('/') : ''}`, message };
}

/** The request's faults among Prism's diagnostics, as the server's 400 problem; undefined when there are none. */
export function validationFault(diagnostics: PrismDiagnostic[]): HttpProblem | undefined {
  const errors = diagnostics.filter((diagnostic) => diagnostic.severity === 0);
  return errors.length > 0 ? asProblem(400, errors.map(validatorErrorOf)) : undefined;
}

/**
 * A Prism routing error (its `name` is "https://stoplight.io/prism/errors#<CODE>")
 * as the server's problem: no such path is the validator's 404, a path
 * without that method its 405.
 */
export function routeFault(error: Error & { status?: number }, method: string, path: string): HttpProblem | undefined {
  const code = error.name.split('#')[1];
  if (code === 'NO_PATH_MATCHED_ERROR' || code === 'NO_RESOURCE_PROVIDED_ERROR' || code === 'NO_SERVER_MATCHED_ERROR') {
    return asProblem(404, [{ path, message: 'not found' }]);
  }
  if (code === 'NO_METHOD_MATCHED_ERROR') return asProblem(405, [{ path, message: `${method} method not allowed` }]);
  return undefined;
}

/**
 * Prism could not answer with what `Prefer` asked for: the operation
 * documents no such status, or its response has no example of that name.
 */
export function preferFault(operation: MockOperation, code: number | undefined, exampleKey: string | undefined): HttpProblem {
  const name = operation.iid ?? `${operation.method.toUpperCase()} ${operation.path}`;
  const codes = operation.responses.map((response) => response.code).filter((candidate) => candidate !== 'default');
  if (code !== undefined && !documentsStatus(operation, code) && defaultExampleFor(operation, code) === undefined) {
    const fromDefault = defaultStatuses(operation);
    return refused(
      `code=${code}: ${name} documents no ${code} response. It documents ${codes.join(', ')}.` +
        (fromDefault.length > 0 ? ` Its default response (any other problem) has examples of ${fromDefault.join(', ')}.` : ''),
    );
  }
  const response = operation.responses.find((candidate) => (code === undefined ? /^2/.test(candidate.code) : candidate.code === String(code)));
  const keys = [...new Set((response?.contents ?? []).flatMap((content) => (content.examples ?? []).map((example) => example.key)))];
  return refused(
    `example=${exampleKey}: the ${response?.code ?? ''} response of ${name} has no example of that name. ` +
      (keys.length > 0 ? `Its examples: ${keys.join(', ')} ("default" is the one example given without a name).` : 'It has no examples.'),
  );
}

/** The operation names this status itself, or its range (`4XX`). */
export function documentsStatus(operation: MockOperation, code: number): boolean {
  return operation.responses.some((response) => response.code === String(code) || response.code === `${String(code)[0]}XX`);
}

/** The statuses the examples of the operation's `default` response are problems of (their `status`). */
function defaultStatuses(operation: MockOperation): number[] {
  const examples = operation.responses.find((response) => response.code === 'default')?.contents?.flatMap((content) => content.examples ?? []) ?? [];
  return [...new Set(examples.map((example) => (example.value as { status?: unknown } | undefined)?.status).filter((status): status is number => typeof status === 'number'))];
}

/**
 * The example of the operation's `default` response whose problem has this
 * status, if there is one. OpenAPI's `default` stands for any status the
 * operation does not name, but Prism, asked for one, would send its first
 * example whatever the status: a 418 whose body says 500.
 */
export function defaultExampleFor(operation: MockOperation, code: number): string | undefined {
  const examples = operation.responses.find((response) => response.code === 'default')?.contents?.flatMap((content) => content.examples ?? []) ?? [];
  return examples.find((example) => (example.value as { status?: unknown } | undefined)?.status === code)?.key;
}

/**
 * A documented problem's detail (Prefer: code=404) as it names the ids of this request: the
 * example names the path parameters' example ids (prj_7h2kq9xw4m), and a caller who asked for
 * another should read their own, as the server would say it.
 */
export function namingRequestedIds(detail: string, operation: MockOperation, requestPath: string): string {
  const template = operation.path.split('/');
  const actual = requestPath.split('/');
  let named = detail;
  for (const parameter of operation.request?.path ?? []) {
    const at = template.indexOf(`{${parameter.name}}`);
    const value = at >= 0 ? actual[at] : undefined;
    if (!value) continue;
    for (const example of parameter.examples ?? []) {
      if (typeof example.value === 'string' && example.value !== '') named = named.replaceAll(example.value, decodeURIComponent(value));
    }
  }
  return named;
}
