/**
 * What a service knows of the request it serves, and what it answers besides
 * its body (issue 28, "One door": services take a principal and plain inputs
 * and return data; no Express Request or Response below the handlers).
 *
 * A handler builds the facts from its request (server/http/request-facts.ts,
 * `requestFacts`) and writes a Reply's cookies and headers before its body
 * (`sendReply` there). Only what some service reads is here.
 */

export interface RequestFacts {
  /** The client's address (req.ip, with the proxies trusted as configured); absent when unknown. */
  address?: string;
  /** The User-Agent header. */
  userAgent?: string;
  /** The Origin header, for same-origin checks. */
  origin?: string;
  /** The Sec-Fetch-Site header, for same-origin checks. */
  secFetchSite?: string;
  /** The signed-in session the request carried (authenticated by http/auth.ts), if any: its id and its person. */
  session?: { id: string; userId: string };
  /** The request's cookies (the Cookie header, parsed). */
  cookies: Readonly<Record<string, string | undefined>>;
}

/** A service's answer with what the handler writes before its body: Set-Cookie values (whole, in order) and headers. */
export interface Reply<T> {
  body: T;
  cookies: string[];
  headers: Record<string, string>;
}

/** A Reply of `body` that sets nothing else. */
export function reply<T>(body: T, more: Partial<Omit<Reply<T>, 'body'>> = {}): Reply<T> {
  return { body, cookies: more.cookies ?? [], headers: more.headers ?? {} };
}
