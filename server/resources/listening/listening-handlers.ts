import type { Response } from 'express';
import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import { requestFacts, sendReply } from '../../http/request-facts.ts';
import { listenerFacts, resolveListenerAccess } from './listener.ts';
import { playerView, type RenderedView } from './view-service.ts';
import { closePlayerSession, openPlayerSession } from './session-service.ts';
import { inviteCollaborator, listCollaborators, removeCollaborator, renewCollaboratorInvite } from '../players/collaborators-service.ts';

/**
 * Views, sessions and signed URLs in them are for this listener alone and
 * change with the session: no cache may keep them (RFC 9111 §5.2.2.5,
 * no-store: "a cache MUST NOT store any part of either the immediate
 * request or the response").
 */
const PRIVATE = { 'Cache-Control': 'private, no-store' };

/**
 * Sends a view as the JSON it was made as (its tracks are kept as JSON,
 * view-tracks-cache.ts), piece by piece, with the headers res.json would
 * give it. Where responses are checked against the spec (VALIDATE_RESPONSES,
 * as in the tests), that very JSON, parsed, goes through res.json, where the
 * validator checks it.
 */
function sendView(ctx: Context, res: Response, view: RenderedView): void {
  res.set(PRIVATE);
  if (ctx.config.validateResponses) {
    res.json(JSON.parse(Buffer.concat(view.chunks).toString('utf8')));
    return;
  }
  res.type('json').set('Content-Length', String(view.chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0)));
  for (const chunk of view.chunks) res.write(chunk);
  res.end();
}

export function listeningHandlers(ctx: Context): OperationHandlers {
  return {
    getPlayerView: async (req, res) => {
      sendView(ctx, res, await playerView(ctx, await resolveListenerAccess(ctx, listenerFacts(ctx, req.user, requestFacts(req)), req.params.playerid)));
    },
    openPlayerSession: async (req, res) => {
      sendView(ctx, res, sendReply(res, await openPlayerSession(ctx, requestFacts(req), req.params.playerid, req.body)));
    },
    closePlayerSession: async (req, res) => {
      res.set(PRIVATE).json(sendReply(res, await closePlayerSession(ctx, requestFacts(req), req.params.playerid)));
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
