import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import { HttpProblem } from '../../http/problem.ts';

/** Under construction (issue 9): each handler is replaced by a real one, with its service, as it is built. */
const pending = () => {
  throw new HttpProblem(501, 'not-implemented', 'This operation is being built.');
};

export function listeningHandlers(_ctx: Context): OperationHandlers {
  return {
    getPlayerView: pending,
    openPlayerSession: pending,
    closePlayerSession: pending,
    listCollaborators: pending,
    removeCollaborator: pending,
    renewCollaboratorInvite: pending,
  };
}
