import type { OperationHandlers } from '../../http/operations.ts';
import { consumeOrRefuse } from '../../http/rate-limit.ts';
import type { Context } from '../../context.ts';
import { requestFacts } from '../../http/request-facts.ts';
import { listenerFacts, resolveListener } from '../listening/listener.ts';
import { playerInsights, recordPlay } from './insights-service.ts';

/**
 * Play reports per player session, or per account for a bearer token: a page
 * reports each play once 3 s are heard, then every 15 s and on pause, so a
 * listener sends a few a minute; 120 leaves room for skipping through a
 * whole album. A listener with neither is held by the server's address limit.
 */
export const PLAY_REPORTS = { points: 120, durationSeconds: 60 };

/** What a listener reported and who listened are for this caller alone: no cache keeps them (RFC 9111 §5.2.2.5). */
const PRIVATE = { 'Cache-Control': 'private, no-store' };

export function insightsHandlers(ctx: Context): OperationHandlers {
  const reports = ctx.store.db.rateLimiter({ keyPrefix: 'play-reports', ...PLAY_REPORTS });
  return {
    recordPlay: async (req, res) => {
      // The view's own decision: who may not open the player may not report plays on it (401, 403, 404, 410 as the view answers).
      const listener = await resolveListener(ctx, listenerFacts(ctx, req.user, requestFacts(req)), req.params.playerid);
      const key = listener.sessionId ? `session:${listener.sessionId}` : listener.userId ? `user:${listener.userId}` : undefined;
      if (key) {
        const { points, durationSeconds } = PLAY_REPORTS;
        await consumeOrRefuse(reports, key, (retryAfter) => `Too many play reports from this session: the limit is ${points} per ${durationSeconds} s. Retry after ${retryAfter} second(s).`);
      }
      res.set(PRIVATE).json(await recordPlay(ctx, listener, req.body));
    },
    getPlayerInsights: async (req, res) => {
      res.set(PRIVATE).json(await playerInsights(ctx, req.user, req.params.playerid));
    },
  };
}
