/**
 * Turns every error into an RFC 9457 problem (`application/problem+json`):
 * our own HttpProblems, the validator's request errors (each offending field
 * listed in `errors`), and body-parser's. Anything else is a bug: it is
 * logged and answered 500 without internals.
 */
import type { NextFunction, Request, Response } from 'express';
import { NulCharacterError } from '../store/db.ts';
import { HttpProblem, PROBLEMS, type FieldError, type ProblemType } from '../lib/problems.ts';

interface ValidatorError {
  status: number;
  message: string;
  errors?: Array<{ path: string; message: string; errorCode?: string }>;
}

interface BodyParserError {
  type: string;
  status?: number;
  limit?: number;
  encoding?: string;
}

/**
 * `accepts` is the media types the matched operation's body takes, when known;
 * a 415 then says which to send instead of a generic "application/json".
 */
export function toProblem(error: unknown, accepts: string[] = []): HttpProblem | undefined {
  if (error instanceof HttpProblem) return error;
  // Defence in depth: the HTTP layer refuses NUL characters before they reach a query (http/nul-characters.ts).
  if (error instanceof NulCharacterError) return new HttpProblem('validation-error', 'The request holds a NUL character (U+0000), which no identifier or text field may hold. Remove it.');
  const parserError = error as BodyParserError;
  switch (parserError?.type) {
    case 'entity.parse.failed':
      return new HttpProblem('malformed-json', 'The request body is not valid JSON. Check for a trailing comma, unquoted keys or single quotes.');
    case 'entity.too.large':
      return new HttpProblem('payload-too-large', `The request body is over the limit of ${parserError.limit} bytes.`);
    case 'encoding.unsupported':
      return new HttpProblem('unsupported-media-type', `Content-Encoding ${parserError.encoding ?? ''} is not supported: send the body as it is, or with gzip, deflate or br.`, {
        errors: [{ header: 'content-encoding', detail: 'must be identity, gzip, deflate or br' }],
      });
    case 'charset.unsupported':
      return new HttpProblem('unsupported-media-type', 'Send the JSON body in UTF-8.');
    case 'request.aborted':
      return new HttpProblem('validation-error', 'The request body ended early.');
    case 'request.size.invalid':
      return new HttpProblem('validation-error', 'The request body is not as long as its Content-Length says.');
  }
  const validatorError = error as ValidatorError;
  if (typeof validatorError?.status === 'number' && Array.isArray(validatorError.errors) && validatorError.status < 500) {
    return fromValidator(validatorError, accepts);
  }
  // Express's router, decoding a route parameter such as /p/%FF, marks the URIError 400.
  if (error instanceof URIError && (error as URIError & { status?: number }).status === 400) {
    return new HttpProblem('validation-error', 'The URL holds a malformed percent-encoding (such as %FF or a lone %). Encode the path as UTF-8.', {
      errors: [{ detail: 'the path must be valid percent-encoded UTF-8' }],
    });
  }
  return undefined;
}

function fromValidator({ status, errors = [] }: ValidatorError, accepts: string[]): HttpProblem {
  const fields = errors.map(fieldError);
  const summary = fields.map((field) => `${field.pointer?.slice(1) ?? field.parameter ?? field.header ?? ''} ${field.detail}`.trim()).join('; ');
  const byStatus: Record<number, [ProblemType, string]> = {
    400: ['validation-error', `The request is not valid: ${summary}.`],
    404: ['not-found', 'There is no such operation. See the API reference at /docs.'],
    405: ['method-not-allowed', `This path does not take that method. See the API reference at /docs.`],
    413: ['payload-too-large', 'The request body is too large.'],
    415: ['unsupported-media-type', unsupportedTypeDetail(errors, accepts)],
  };
  const [type, detail] = byStatus[status] ?? ['validation-error', summary];
  return new HttpProblem(type, detail, PROBLEMS[type].status === 400 ? { errors: fields } : {});
}

/** The validator says "unsupported media type text/plain" (or "… undefined" when none was sent); say what to send instead. */
function unsupportedTypeDetail(errors: ValidatorError['errors'] = [], accepts: string[]): string {
  const sent = /unsupported media type (\S+)/.exec(errors[0]?.message ?? '')?.[1];
  const what = !sent || sent === 'undefined' ? 'a body without a Content-Type' : `Content-Type ${sent}`;
  const wanted = accepts.length > 0 ? accepts : ['application/json'];
  return `This operation does not take ${what}. Send the body as ${wanted.join(' or ')}, with a matching Content-Type header.`;
}

/** express-openapi-validator paths look like /body/options/quality, /query/expires, /headers/x-…, /path/id. */
function fieldError({ path, message }: { path: string; message: string }): FieldError {
  const [, location = '', ...rest] = path.split('/');
  const name = rest.join('/');
  // Unknown fields are refused so that typos do not pass silently; say so plainly.
  const detail = /must NOT have additional properties/.test(message) ? 'is not a field this operation takes; check its spelling, or remove it' : message;
  if (location === 'body') return { pointer: `#${name ? '/' + name : ''}`, detail };
  if (location === 'headers') return { header: name, detail };
  if (location === 'query' || location === 'path') return { parameter: name, detail };
  return { detail: `${path} ${message}` };
}

/**
 * The media types the matched operation takes as its body: named by the request validators' refusal
 * (http/validation), or by express-openapi-validator's `req.openapi` where that validates (the reference).
 */
function declaredBodyTypes(error: unknown, req: Request): string[] {
  const named = (error as { accepts?: unknown } | undefined)?.accepts;
  if (Array.isArray(named) && named.length > 0) return named as string[];
  const operation = (req as Request & { openapi?: { schema?: { requestBody?: { content?: Record<string, unknown> } } } }).openapi?.schema;
  return Object.keys(operation?.requestBody?.content ?? {});
}

export function problemHandler() {
  return (error: unknown, req: Request, res: Response, _next: NextFunction) => {
    let problem = toProblem(error, declaredBodyTypes(error, req));
    if (!problem) {
      // The request's log line (http/request-context.ts) is written at error level with this error and its stack.
      res.err = error instanceof Error ? error : new Error(`A non-Error was thrown: ${JSON.stringify(error)}`);
      problem = new HttpProblem('internal-error', `Something went wrong on our side. Quote request id ${req.id} when reporting it.`);
    }
    if (res.headersSent) {
      // The response had begun (a download); all we can do is cut it off.
      res.destroy();
      return;
    }
    for (const [name, value] of Object.entries(problem.extra.headers ?? {})) res.setHeader(name, value);
    // RFC 9110 §15.5.5 and §15.5.11: a 404 and a 410 are "heuristically cacheable", so a browser may keep answering
    // from its cache what has changed since (a link the owner renewed still "expired"). A refusal is about this
    // moment: RFC 9111 §5.2.2.5, no-store, "a cache MUST NOT store any part of either the immediate request or response".
    if (!res.getHeader('Cache-Control')) res.setHeader('Cache-Control', 'no-store');
    // A 405 names its Allow itself (RFC 9110 §15.5.6), from the operation table (http/route.ts) or, outside the API, the MCP server's.
    res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem.body(String(req.id))));
  };
}
