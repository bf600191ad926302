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

const titles: Record<string, string> = {
  'validation-error': 'Your request is not valid',
  'malformed-json': 'The body is not valid JSON',
  unauthorized: 'Authentication required',
  forbidden: 'Not allowed',
  'signature-invalid': 'Signed URL refused',
  'not-found': 'Not found',
  conflict: 'Conflict with the stored state',
  'payment-provider-required': 'Connect a payment provider first',
  'payments-not-configured': 'This server takes no payments',
  'payment-provider-error': 'The payment provider failed',
  'upload-already-used': 'Upload URL already used',
  'precondition-failed': 'Precondition failed',
  'payload-too-large': 'Too large',
  'storage-quota-exceeded': 'Storage quota exceeded',
  'unsupported-media-type': 'Unsupported media type',
  'range-not-satisfiable': 'Range not satisfiable',
  'rate-limited': 'Too many requests',
  'request-timeout': 'Request timeout',
  'headers-too-large': 'Request headers too large',
  // Listener operations (a player page's view, session and comments).
  'player-locked': 'This player is locked',
  'player-expired': 'This link has expired',
  'password-incorrect': 'Wrong password',
  'invite-invalid': 'This invite link does not work',
  'name-required': 'A display name is needed',
  'method-not-allowed': 'Method not allowed',
  'service-unavailable': 'Service unavailable',
  'internal-error': 'Internal server error',
  // Only while an operation of the spec is being built (never in a release: the contract suite covers every operation).
  'not-implemented': 'Not implemented yet',
};

export type ProblemType = keyof typeof titles;

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
    status: number,
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
    this.status = status;
    this.type = type;
    this.detail = detail;
    this.extra = extra;
    this.name = 'HttpProblem';
  }

  body(instance: string) {
    return {
      type: `/problems/${this.type}`,
      title: titles[this.type],
      status: this.status,
      detail: this.detail,
      instance,
      ...(this.extra.errors ? { errors: this.extra.errors } : {}),
      ...this.extra.members,
    };
  }
}

export const badRequest = (detail: string, errors?: FieldError[]) => new HttpProblem(400, 'validation-error', detail, { errors });
export const forbidden = (detail: string) => new HttpProblem(403, 'forbidden', detail);
export const notFound = (detail: string) => new HttpProblem(404, 'not-found', detail);
export const conflict = (detail: string) => new HttpProblem(409, 'conflict', detail);
export const tooLarge = (detail: string) => new HttpProblem(413, 'payload-too-large', detail);
export const unsupportedMediaType = (detail: string) => new HttpProblem(415, 'unsupported-media-type', detail);
export const signatureRefused = (detail: string) => new HttpProblem(403, 'signature-invalid', detail);
