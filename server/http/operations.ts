/**
 * Routing by operationId. express-openapi-validator has already matched
 * each request to an operation of the spec (req.openapi.schema) and parsed
 * its path parameters, so the handler is looked up by that operation's id
 * instead of matching the path again. Each resource exports a table of
 * handlers; at start, every operation of the spec must have exactly one.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { operations, type OperationId } from '../../generated/client.ts';

/** A handler of one operation; `req.params` holds the operation's path parameters. */
export type OperationHandler = (req: Request<Record<string, string>>, res: Response) => Promise<void> | void;
export type OperationHandlers = Partial<Record<OperationId, OperationHandler>>;

export function dispatchOperations(...tables: OperationHandlers[]): RequestHandler {
  const handlers = new Map<string, OperationHandler>();
  for (const table of tables) {
    for (const [operationId, handler] of Object.entries(table)) {
      if (handlers.has(operationId)) throw new Error(`Two handlers for operation ${operationId}`);
      handlers.set(operationId, handler!);
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
      await handler(req as Request<Record<string, string>>, res);
    } catch (error) {
      next(error);
    }
  };
}
