/**
 * The one place a request becomes RequestFacts for the services, and a
 * service's Reply becomes Set-Cookie and headers on the response (issue 28:
 * no Express Request or Response below the handlers).
 */
import type { Request, Response } from 'express';
import { parse as parseCookies } from 'cookie';
import type { Reply, RequestFacts } from '../lib/request-facts.ts';

/** What the services may know of `req` (any operation's request: its typed `user` may say none, authentication may still have found a session). */
export function requestFacts(req: Pick<Request, 'ip' | 'get' | 'headers' | 'auth'> & { user?: { id: string } }): RequestFacts {
  const { auth, user } = req;
  return {
    ...(req.ip !== undefined ? { address: req.ip } : {}),
    ...optional('userAgent', req.get('user-agent')),
    ...optional('origin', req.get('origin')),
    ...optional('secFetchSite', req.get('sec-fetch-site')),
    ...(auth?.kind === 'session' && auth.sessionId && user ? { session: { id: auth.sessionId, userId: user.id } } : {}),
    cookies: req.headers.cookie ? parseCookies(req.headers.cookie) : {},
  };
}

const optional = <K extends string>(key: K, value: string | undefined) => (value !== undefined ? ({ [key]: value } as Record<K, string>) : {});

/** Writes the reply's cookies (appended, in order) and headers on `res`, and gives back its body for the handler to send. */
export function sendReply<T>(res: Response, reply: Reply<T>): T {
  for (const cookie of reply.cookies) res.append('Set-Cookie', cookie);
  for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
  return reply.body;
}
