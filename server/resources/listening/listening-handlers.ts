import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import { resolveListener } from './listener.ts';
import { playerView } from './view-service.ts';
import { closePlayerSession, openPlayerSession } from './session-service.ts';
import { inviteCollaborator, listCollaborators, removeCollaborator, renewCollaboratorInvite } from '../players/collaborators-service.ts';

/**
 * Views, sessions and signed URLs in them are for this listener alone and
 * change with the session: no cache may keep them (RFC 9111 §5.2.2.5,
 * no-store: "a cache MUST NOT store any part of either the immediate
 * request or the response").
 */
const PRIVATE = { 'Cache-Control': 'private, no-store' };

export function listeningHandlers(ctx: Context): OperationHandlers {
  return {
    getPlayerView: async (req, res) => {
      const view = await playerView(ctx, await resolveListener(ctx, req, req.params.playerid));
      res.set(PRIVATE).json(view);
    },
    openPlayerSession: async (req, res) => {
      const view = await openPlayerSession(ctx, req, res, req.params.playerid, req.body);
      res.set(PRIVATE).json(view);
    },
    closePlayerSession: async (req, res) => {
      res.set(PRIVATE).json(await closePlayerSession(ctx, req, res, req.params.playerid));
    },
    listCollaborators: async (req, res) => {
      res.set(PRIVATE).json(await listCollaborators(ctx, req.user, req.params.playerid));
    },
    inviteCollaborator: async (req, res) => {
      res.json(await inviteCollaborator(ctx, req.user, req.params.playerid, req.params.email, req.body.role));
    },
    removeCollaborator: async (req, res) => {
      res.json(await removeCollaborator(ctx, req.user, req.params.playerid, req.params.email));
    },
    renewCollaboratorInvite: async (req, res) => {
      res.set(PRIVATE).json(await renewCollaboratorInvite(ctx, req.user, req.params.playerid, req.params.email));
    },
  };
}
