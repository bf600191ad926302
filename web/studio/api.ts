/**
 * The studio's only way to the server: the public API, through the generated
 * typed client, with the account's session cookie (HttpOnly: the app never
 * sees it, never holds a token). Every call answers an `Answer`, the data or
 * the refusal as a page shows it, the way the account pages do
 * (web/account/api.ts), so a refusal is never an exception to forget.
 */
import { createApiClient, type ApiClient, type Schemas } from '../../generated/client.ts';
import { answer, type Answer, type Refusal } from '../account/api.ts';

export { answer };
export type { Answer, Refusal, Schemas };
export type Project = Schemas['Project'];
export type Box = Schemas['Box'];
export type FileBox = Schemas['FileBox'];
export type Player = Schemas['Player'];
export type User = Schemas['User'];

export interface Studio {
  client: ApiClient;
  /** The path PUBLIC_URL may carry ('' at the root), before every page's path. */
  basePath: string;
  apiBase: string;
  /** Reads started as the studio booted, for the page it opened on (main.tsx); each is taken once (`early`). */
  early: Map<string, Promise<unknown>>;
}

export function studioOf(apiBase: string, basePath: string): Studio {
  // Never from the browser's HTTP cache: what the studio shows must be what the server has now, not a copy a revalidation
  // kept (a project's ETag did not count its files once, and the page showed the size before the uploads).
  return { client: createApiClient({ baseUrl: apiBase, cache: 'no-store' }), basePath, apiBase, early: new Map() };
}

/**
 * The answer of the read `key` if the studio started it as it booted (main.tsx: side by side with GET /me, so
 * the page's first screen does not wait for one answer and then another), else of `read`, started now. Taken
 * once: the page opened again, or read again, reads anew.
 */
export function early<T>(studio: Studio, key: string, read: () => Promise<T>): Promise<T> {
  const started = studio.early.get(key) as Promise<T> | undefined;
  studio.early.delete(key);
  return started ?? read();
}

/**
 * The cursor of a list's next page, from its RFC 8288 `Link: <…>; rel="next"`
 * header (server/http/paging.ts), or undefined on the last page.
 */
export function nextCursor(response: Response): string | undefined {
  const link = response.headers.get('Link');
  const next = link?.split(',').find((part) => /;\s*rel="?next"?/.test(part));
  const url = next && /<([^>]+)>/.exec(next)?.[1];
  return url ? (new URL(url, window.location.href).searchParams.get('cursor') ?? undefined) : undefined;
}

/**
 * Every item of a paged list, page after page (`limit` 100 each): `page` makes
 * one typed call with the cursor it is given.
 */
export async function allPages<T>(page: (cursor: string | undefined) => Promise<{ data?: T[]; error?: unknown; response: Response }>): Promise<Answer<T[]>> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    let response: Response | undefined;
    const one = await answer(
      page(cursor).then((result) => {
        response = result.response;
        return result;
      }),
    );
    if (!one.ok) return one;
    items.push(...one.data);
    cursor = response ? nextCursor(response) : undefined;
  } while (cursor);
  return { ok: true, data: items };
}
