/**
 * Errors as RFC 9457 problem details. Code anywhere below the routes throws
 * an HttpProblem; the error handler (http/errors.ts) writes it as
 * `application/problem+json`. The `type` slugs are listed in the spec's
 * introduction, section "Errors".
 */
export interface FieldError {
  detail: string;
  pointer?: string;
  parameter?: string;
  header?: string;
}

/**
 * The catalogue of problem types: each slug with its one status and its
 * title, as the spec's introduction ("Errors") lists them (a test holds the
 * two together). A problem is raised by naming its slug; the status follows,
 * so a slug cannot be sent with another status, and a misspelt slug does not
 * compile.
 */
export const PROBLEMS = {
  'validation-error': { status: 400, title: 'Your request is not valid' },
  'malformed-json': { status: 400, title: 'The body is not valid JSON' },
  'link-invalid': { status: 400, title: 'This link does not work' },
  unauthorized: { status: 401, title: 'Authentication required' },
  forbidden: { status: 403, title: 'Not allowed' },
  // RFC 6750 §3.1, insufficient_scope: "The request requires higher privileges than provided by the access token."
  'insufficient-scope': { status: 403, title: 'The token lacks a scope' },
  'signature-invalid': { status: 403, title: 'Signed URL refused' },
  'not-found': { status: 404, title: 'Not found' },
  conflict: { status: 409, title: 'Conflict with the stored state' },
  'payment-provider-required': { status: 409, title: 'Connect a payment provider first' },
  'payments-not-configured': { status: 409, title: 'This server takes no payments' },
  'mail-not-configured': { status: 409, title: 'This server sends no mail' },
  'payment-provider-error': { status: 502, title: 'The payment provider failed' },
  'upload-already-used': { status: 409, title: 'Upload URL already used' },
  // draft-ietf-httpapi-idempotency-key-header: "If the request is retried, while the original request is still being
  // processed, the resource SHOULD reply with an HTTP 409"; "reuse an idempotency key with a different request
  // payload, the resource SHOULD reply with a HTTP 422".
  'idempotency-key-in-use': { status: 409, title: 'A request with this Idempotency-Key is still running' },
  'idempotency-key-reused': { status: 422, title: 'This Idempotency-Key was used for another request' },
  'precondition-failed': { status: 412, title: 'Precondition failed' },
  'payload-too-large': { status: 413, title: 'Too large' },
  'storage-quota-exceeded': { status: 413, title: 'Storage quota exceeded' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'range-not-satisfiable': { status: 416, title: 'Range not satisfiable' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  'request-timeout': { status: 408, title: 'Request timeout' },
  'headers-too-large': { status: 431, title: 'Request headers too large' },
  // Listener operations (a player page's view, session and comments).
  'player-locked': { status: 401, title: 'This player is locked' },
  'player-expired': { status: 410, title: 'This link has expired' },
  'password-incorrect': { status: 403, title: 'Wrong password' },
  'invite-invalid': { status: 403, title: 'This invite link does not work' },
  'name-required': { status: 401, title: 'A display name is needed' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'service-unavailable': { status: 503, title: 'Service unavailable' },
  'internal-error': { status: 500, title: 'Internal server error' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemType = keyof typeof PROBLEMS;

export class HttpProblem extends Error {
  readonly status: number;
  readonly type: ProblemType;
  readonly detail: string;
  readonly extra: {
      errors?: FieldError[];
      headers?: Record<string, string>;
      /** RFC 9457 §3.2: "Problem type definitions MAY extend the problem details object with additional members". */
      members?: Record<string, unknown>;
    };

  constructor(
    type: ProblemType,
    detail: string,
    extra: {
      errors?: FieldError[];
      headers?: Record<string, string>;
      /** RFC 9457 §3.2: "Problem type definitions MAY extend the problem details object with additional members". */
      members?: Record<string, unknown>;
    } = {},
  ) {
    super(detail);
    this.status = PROBLEMS[type].status;
    this.type = type;
    this.detail = detail;
    this.extra = extra;
    this.name = 'HttpProblem';
  }

  body(instance: string) {
    return {
      type: `/problems/${this.type}`,
      title: PROBLEMS[this.type].title,
      status: this.status,
      detail: this.detail,
      instance,
      ...(this.extra.errors ? { errors: this.extra.errors } : {}),
      ...this.extra.members,
    };
  }
}

export const badRequest = (detail: string, errors?: FieldError[]) => new HttpProblem('validation-error', detail, { errors });
export const forbidden = (detail: string) => new HttpProblem('forbidden', detail);
export const notFound = (detail: string) => new HttpProblem('not-found', detail);
export const conflict = (detail: string) => new HttpProblem('conflict', detail);
export const tooLarge = (detail: string) => new HttpProblem('payload-too-large', detail);
export const unsupportedMediaType = (detail: string) => new HttpProblem('unsupported-media-type', detail);
export const signatureRefused = (detail: string) => new HttpProblem('signature-invalid', detail);
