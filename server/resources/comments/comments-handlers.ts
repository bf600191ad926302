import { pageOf } from '../../http/paging.ts';
import { oldestFirst } from '../../lib/sort-keys.ts';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Caller, OperationHandlers, OperationRequest } from '../../http/operations.ts';
import { consumeOrRefuse } from '../../http/rate-limit.ts';
import type { Context } from '../../context.ts';
import { requestFacts } from '../../http/request-facts.ts';
import { listenerFacts, resolveListener, type Listener } from '../listening/listener.ts';
import * as comments from './comments-service.ts';
import * as inbox from './inbox-service.ts';
import { exportComments } from './comments-export.ts';
import { dispositionHeader } from '../downloads/download-rules.ts';
import { newestFirst } from '../../lib/sort-keys.ts';

/**
 * Writes on a player (create, update, delete), per player session, or per
 * account for a bearer token: a listener needs no account, so the API's
 * per-user limit does not hold them, and the per-address one is shared by
 * everyone behind one NAT. Twenty a minute is far above what a person
 * typing comments sends, and low enough that a script cannot bury a track.
 */
export const PLAYER_COMMENT_WRITES = { points: 20, durationSeconds: 60 };

/** Counts a listener's write, or refuses it with 429 and Retry-After (RFC 6585 §4: it "MAY include a Retry-After header"). */
async function countWrite(limiter: RateLimiterAbstract, listener: Listener): Promise<void> {
  // A listener without a session or an account has nothing to count by; their writes are refused anyway (401/403), and the address limit holds them.
  const key = listener.sessionId ? `session:${listener.sessionId}` : listener.userId ? `user:${listener.userId}` : undefined;
  if (!key) return;
  const { points, durationSeconds } = PLAYER_COMMENT_WRITES;
  await consumeOrRefuse(limiter, key, (retryAfter) => `Too many comment writes from this session: the limit is ${points} per ${durationSeconds} s. Retry after ${retryAfter} second(s).`);
}

export function commentsHandlers(ctx: Context): OperationHandlers {
  const writes = ctx.store.db.rateLimiter({ keyPrefix: 'comment-writes', ...PLAYER_COMMENT_WRITES });

  const onProject = (req: { user: Caller; params: { projectid: string; fileid: string } }) => comments.projectCommenter(ctx, req.user, req.params.projectid, req.params.fileid);
  const onPlayer = async (req: OperationRequest<'listPlayerComments' | 'createPlayerComment' | 'updatePlayerComment' | 'deletePlayerComment'>, write: boolean) => {
    const listener = await resolveListener(ctx, listenerFacts(ctx, req.user, requestFacts(req)), req.params.playerid);
    const scope = await comments.playerCommenter(ctx, listener, req.params.fileid);
    if (write) await countWrite(writes, listener);
    return scope;
  };

  return {
    listComments: async (req, res) => {
      const { commenter, file } = await onProject(req);
      res.json(pageOf(ctx, req, res, await comments.listComments(ctx, commenter, file), oldestFirst));
    },
    createComment: async (req, res) => {
      const { commenter, file } = await onProject(req);
      res.json(await comments.createComment(ctx, commenter, file, req.body));
    },
    getComment: async (req, res) => {
      const { commenter, file } = await onProject(req);
      res.json(await comments.getComment(ctx, commenter, file, req.params.commentid));
    },
    updateComment: async (req, res) => {
      const { commenter, file } = await onProject(req);
      res.json(await comments.updateComment(ctx, commenter, file, req.params.commentid, req.body));
    },
    deleteComment: async (req, res) => {
      const { commenter, file } = await onProject(req);
      res.json(await comments.deleteComment(ctx, commenter, file, req.params.commentid));
    },
    listProjectComments: async (req, res) => {
      const list = await inbox.listProjectComments(ctx, req.user, req.params.projectid, req.query.status ?? 'all');
      res.json(pageOf(ctx, req, res, list, newestFirst));
    },
    listInboxComments: async (req, res) => {
      res.json(pageOf(ctx, req, res, await inbox.listInboxComments(ctx, req.user, req.query.status ?? 'all'), inbox.inboxOrder));
    },
    getInboxSummary: async (req, res) => {
      res.json(await inbox.inboxSummary(ctx, req.user));
    },
    listHeldFiles: async (req, res) => {
      res.json(pageOf(ctx, req, res, await inbox.listHeldFiles(ctx, req.user), (held) => newestFirst({ timeCreated: held.file.timeCreated, id: held.file.id })));
    },
    exportComments: async (req, res) => {
      // Any member may read the file's comments, so any member may export them: every one, as listComments lists them.
      const { file } = await onProject(req);
      const exported = exportComments(file.name, await ctx.store.comments.list(file.id), req.query.format);
      res.setHeader('Content-Type', exported.contentType);
      res.setHeader('Content-Disposition', dispositionHeader('attachment', exported.filename));
      res.send(exported.body);
    },
    listPlayerComments: async (req, res) => {
      const { commenter, file } = await onPlayer(req, false);
      res.json(pageOf(ctx, req, res, await comments.listComments(ctx, commenter, file), oldestFirst));
    },
    createPlayerComment: async (req, res) => {
      const { commenter, file } = await onPlayer(req, true);
      res.json(await comments.createComment(ctx, commenter, file, req.body));
    },
    updatePlayerComment: async (req, res) => {
      const { commenter, file } = await onPlayer(req, true);
      res.json(await comments.updateComment(ctx, commenter, file, req.params.commentid, req.body));
    },
    deletePlayerComment: async (req, res) => {
      const { commenter, file } = await onPlayer(req, true);
      res.json(await comments.deleteComment(ctx, commenter, file, req.params.commentid));
    },
  };
}
