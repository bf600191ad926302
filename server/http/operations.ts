/**
 * Routing by operationId. express-openapi-validator has already matched
 * each request to an operation of the spec (req.openapi.schema) and parsed
 * its path parameters, so the handler is looked up by that operation's id
 * instead of matching the path again. Each resource exports a table of
 * handlers; at start, every operation of the spec must have exactly one.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { operations, type OperationId } from '../../generated/client.ts';
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

export function dispatchOperations(...tables: OperationHandlers[]): RequestHandler {
  // At run time every handler takes the request the validator matched; the types above hold each to its operation.
  type AnyHandler = (req: Request, res: Response) => Promise<void> | void;
  const handlers = new Map<string, AnyHandler>();
  for (const table of tables) {
    for (const [operationId, handler] of Object.entries(table)) {
      if (handlers.has(operationId)) throw new Error(`Two handlers for operation ${operationId}`);
      handlers.set(operationId, handler as unknown as AnyHandler);
    }
  }
  const missing = Object.keys(operations).filter((operationId) => !handlers.has(operationId));
  if (missing.length > 0) throw new Error(`No handler for operations: ${missing.join(', ')}`);

  return async (req: Request, res: Response, next: NextFunction) => {
    const openapi = (req as Request & { openapi?: { schema?: { operationId?: string }; pathParams?: Record<string, string> } }).openapi;
    const handler = openapi?.schema?.operationId ? handlers.get(openapi.schema.operationId) : undefined;
    if (!handler) return next();
    // Express resets req.params for each layer; the validator's match holds the operation's.
    req.params = openapi!.pathParams ?? {};
    try {
      await handler(req, res);
    } catch (error) {
      next(error);
    }
  };
}
