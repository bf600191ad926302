/**
 * The portal's operations in the table every operation of the spec must
 * have a handler in (http/operations.ts). Their requests never reach it:
 * portal-tus.ts serves them before the API's authentication and validator,
 * since tus requests carry no token and PATCH bodies stream unparsed. A
 * request that did reach it would be a routing bug, answered 500.
 */
import type { OperationHandlers } from '../../http/operations.ts';

const servedByTus = () => {
  throw new Error('a tus request of the upload portal reached the API router: portalRoutes must be mounted before it');
};

export function portalHandlers(): OperationHandlers {
  return { createPortalUpload: servedByTus, appendPortalUpload: servedByTus, cancelPortalUpload: servedByTus };
}
