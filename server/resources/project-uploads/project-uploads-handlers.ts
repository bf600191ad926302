/**
 * Project members' resumable uploads in the table every operation of the
 * spec must have a handler in (http/operations.ts). Their requests never
 * reach it: project-uploads-tus.ts serves them before the API's body parser
 * and validator, since PATCH bodies stream unparsed. A request that did reach
 * it would be a routing bug, answered 500.
 */
import type { OperationHandlers } from '../../http/operations.ts';

const servedByTus = () => {
  throw new Error('a tus request of a project member reached the API router: projectUploadRoutes must be mounted before it');
};

export function projectUploadsHandlers(): OperationHandlers {
  return { createProjectUpload: servedByTus, appendProjectUpload: servedByTus, cancelProjectUpload: servedByTus };
}
