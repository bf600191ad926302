import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import { HttpProblem } from '../../http/problem.ts';

/** Under construction (issue 9): each handler is replaced by a real one, with its service, as it is built. */
const pending = () => {
  throw new HttpProblem(501, 'not-implemented', 'This operation is being built.');
};

export function commentsHandlers(_ctx: Context): OperationHandlers {
  return {
    listComments: pending,
    createComment: pending,
    getComment: pending,
    updateComment: pending,
    deleteComment: pending,
    listPlayerComments: pending,
    createPlayerComment: pending,
    updatePlayerComment: pending,
    deletePlayerComment: pending,
  };
}
