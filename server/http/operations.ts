/**
 * Dispatch by operationId. The request path (http/route.ts) has already
 * matched each request to its operation (req.operation) and decoded its path
 * parameters (req.pathParams), so the handler is looked up by that
 * operation's id, never by matching the path again. Each resource exports a
 * table of handlers; at start, every operation of the table
 * (generated/operations.ts) must have exactly one.
 *
 * Two kinds: typed handlers, called after the JSON body is parsed and the
 * request validated; and raw handlers, for the operations that read their
 * own bytes and speak a protocol of their own (tus: `protocol: 'tus'`),
 * called after authentication and before the body parser and validator.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { OperationId, operations } from '../../generated/client.ts';
import { OPERATIONS, type OperationId as AnyOperationId } from '../../generated/operations.ts';
import type { operations as OperationTypes } from '../../generated/schema.d.ts';
import type { Caller } from '../auth/access.ts';

export type { Caller };

// No parameters: reading any is a type error.
type Nothing = Record<never, never>;
type ParametersOf<Id extends OperationId> = OperationTypes[Id]['parameters'];
/** The operation's path parameters, as the spec names them. */
export type PathOf<Id extends OperationId> = ParametersOf<Id> extends { path: infer P } ? (P extends Record<string, unknown> ? P : Nothing) : Nothing;
/** The operation's query parameters, as the validator hands them over (coerced to the spec's types). */
export type QueryOf<Id extends OperationId> = ParametersOf<Id> extends { query?: infer Q } ? (Q extends Record<string, unknown> ? Q : Nothing) : Nothing;
/** The operation's JSON body, as the validator let it through; `unknown` for raw bytes (an upload) or no body. */
export type BodyOf<Id extends OperationId> = OperationTypes[Id] extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : OperationTypes[Id] extends { requestBody?: { content: { 'application/json': infer B } } }
    ? B | undefined
    : unknown;
/** The caller: present where the spec requires a bearer token, perhaps where it is optional, never where it takes none. */
export type CallerOf<Id extends OperationId> = (typeof operations)[Id]['caller'] extends 'required'
  ? Caller
  : (typeof operations)[Id]['caller'] extends 'optional'
    ? Caller | undefined
    : undefined;

/**
 * The request of one operation, typed from the spec (generated/schema.d.ts):
 * a handler that reads a parameter or body field the spec does not have, or
 * the caller of an operation that has none, fails type-checking.
 */
export type OperationRequest<Id extends OperationId> = Id extends OperationId
  ? Omit<Request<PathOf<Id>, unknown, BodyOf<Id>, QueryOf<Id>>, 'user'> & { user: CallerOf<Id> }
  : never;

/** A handler of one operation. */
export type OperationHandler<Id extends OperationId> = (req: OperationRequest<Id>, res: Response) => Promise<void> | void;
export type OperationHandlers = { [Id in OperationId]?: OperationHandler<Id> };

/** A handler that reads the request itself (its bytes, its protocol's headers): a tus operation's. */
export type RawHandler = (req: Request<Record<string, string>>, res: Response, next: NextFunction) => Promise<void> | void;
export type RawHandlers = { [Id in AnyOperationId]?: RawHandler };

/** The two middlewares of dispatch: `raw` before the body parser and validator, `typed` after them. */
export interface Dispatch {
  raw: RequestHandler;
  typed: RequestHandler;
}

async function runRaw(handler: RawHandler, req: Request, res: Response, next: NextFunction) {
  // Express resets req.params for each layer; the router's match holds the operation's.
  req.params = req.pathParams ?? {};
  try {
    await handler(req as Request<Record<string, string>>, res, next);
  } catch (error) {
    next(error);
  }
}

export function dispatchOperations(tables: OperationHandlers[], rawTables: RawHandlers[] = []): Dispatch {
  // At run time every handler takes the request the router matched; the types above hold each to its operation.
  type AnyHandler = (req: Request, res: Response) => Promise<void> | void;
  const typed = new Map<string, AnyHandler>();
  const raw = new Map<string, RawHandler>();
  const add = <H>(into: Map<string, H>, table: Record<string, unknown>) => {
    for (const [operationId, handler] of Object.entries(table)) {
      if (typed.has(operationId) || raw.has(operationId)) throw new Error(`Two handlers for operation ${operationId}`);
      into.set(operationId, handler as H);
    }
  };
  for (const table of tables) add(typed, table);
  for (const table of rawTables) add(raw, table);
  const missing = OPERATIONS.filter(({ id }) => !typed.has(id) && !raw.has(id)).map(({ id }) => id);
  if (missing.length > 0) throw new Error(`No handler for operations: ${[...new Set(missing)].join(', ')}`);
  const misplaced = OPERATIONS.filter(({ id, protocol }) => (protocol === 'tus') !== raw.has(id)).map(({ id }) => id);
  if (misplaced.length > 0) throw new Error(`The tus operations, and only they, are served raw: ${misplaced.join(', ')}`);

  return {
    // Not async itself: every API request passes here, and all but the tus operations' go on at once, without a promise.
    raw: (req: Request, res: Response, next: NextFunction) => {
      const handler = req.operation && raw.get(req.operation.id);
      if (!handler) return next();
      return runRaw(handler, req, res, next);
    },
    typed: async (req: Request, res: Response, next: NextFunction) => {
      const handler = req.operation && typed.get(req.operation.id);
      // Unreachable: every operation has a handler, checked above, and the router refused every request without one.
      if (!handler) return next(new Error(`${req.method} ${req.path} reached dispatch without an operation that has a handler`));
      req.params = req.pathParams ?? {};
      try {
        await handler(req, res);
      } catch (error) {
        next(error);
      }
    },
  };
}
