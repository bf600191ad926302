/**
 * Paging of the list operations without breaking their clients: a list
 * still answers a JSON array, the whole list when the request names neither
 * `limit` nor `cursor`, as before. With `limit`, it answers at most that
 * many items, and when more follow, an RFC 8288 link to the next page:
 *
 *   Link: <https://host/api/v1/players?limit=50&cursor=…>; rel="next"
 *
 * The cursor is keyset, not an offset: it holds the sort key of the last
 * item sent (each list's own order, ending with the id, so it is total), and
 * the next page starts after that key. An item added or removed meanwhile
 * does not shift the pages: nothing is sent twice, and nothing that was
 * there when the listing began is skipped. The cursor is signed with the
 * server's secret and bound to its list (the path), so a client cannot
 * forge one, nor carry one to another list; a bad one is a 400 naming the
 * `cursor` parameter.
 */
import type { Response } from 'express';
import { apiRoot, type Context } from '../context.ts';
import { badRequest } from './problem.ts';
import { compareKeys, type SortKey } from '../lib/sort-keys.ts';

/** Items per page when a cursor comes without a limit. */
export const DEFAULT_PAGE_LIMIT = 100;
/** The spec's `maximum` of `limit` (openapi/components/parameters.yaml); the validator refuses more before this runs. */
export const MAX_PAGE_LIMIT = 1000;

/** What paging reads of a list operation's request: its path and its query. */
export interface ListRequest {
  path: string;
  query: { limit?: number | string; cursor?: string } & Record<string, unknown>;
}

const listOf = (req: ListRequest) => req.path;
const signedFields = (list: string, key: string) => ({ method: 'GET' as const, path: `/paging${list}`, expires: 0, bound: { after: key } });

function encodeCursor(ctx: Pick<Context, 'signer'>, list: string, key: SortKey): string {
  const json = JSON.stringify(key);
  return `${Buffer.from(json).toString('base64url')}.${ctx.signer.sign(signedFields(list, json))}`;
}

function decodeCursor(ctx: Pick<Context, 'signer'>, list: string, cursor: string): SortKey {
  const refuse = (why: string) =>
    badRequest(`The cursor is not one this list gave: ${why}. Use the cursor of the rel="next" link exactly as it came, on the same list, or leave it out to start again.`, [
      { parameter: 'cursor', detail: why },
    ]);
  const [encoded, signature, ...rest] = cursor.split('.');
  if (!encoded || !signature || rest.length > 0 || !/^[0-9a-f]{64}$/.test(signature)) throw refuse('it is malformed');
  const json = Buffer.from(encoded, 'base64url').toString('utf8');
  if (!ctx.signer.verify(signedFields(list, json), signature)) throw refuse('its signature does not match (altered, or from another list)');
  const key = JSON.parse(json) as unknown;
  if (!Array.isArray(key) || !key.every((part) => typeof part === 'string' || typeof part === 'number')) throw refuse('it is malformed');
  return key;
}

/**
 * The page of `items` the request asks for, in the order of `keyOf`, with
 * the Link header set on `res` when more follow; all of `items`, untouched,
 * when the request asks for no page.
 */
export function pageOf<T>(ctx: Pick<Context, 'signer' | 'config'>, req: ListRequest, res: Response, items: T[], keyOf: (item: T) => SortKey): T[] {
  const limitParam = req.query.limit;
  const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : undefined;
  if (limitParam === undefined && cursor === undefined) return items;
  // The validator has checked limit against the spec (an integer from 1 to MAX_PAGE_LIMIT).
  const limit = limitParam === undefined ? DEFAULT_PAGE_LIMIT : Number(limitParam);
  const list = listOf(req);
  const keyed = items.map((item) => ({ item, key: keyOf(item) })).sort((a, b) => compareKeys(a.key, b.key));
  const after = cursor === undefined ? undefined : decodeCursor(ctx, list, cursor);
  const start = after === undefined ? 0 : keyed.findIndex(({ key }) => compareKeys(key, after) > 0);
  const page = start < 0 ? [] : keyed.slice(start, start + limit);
  if (start >= 0 && start + limit < keyed.length) {
    const next = new URL(`${apiRoot(ctx.config)}${list}`);
    for (const [name, value] of Object.entries(req.query)) if (typeof value === 'string' && name !== 'cursor') next.searchParams.set(name, value);
    next.searchParams.set('limit', String(limit));
    next.searchParams.set('cursor', encodeCursor(ctx, list, page[page.length - 1].key));
    // RFC 8288 section 3: Link = link-value, where link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param ).
    res.setHeader('Link', `<${next.href}>; rel="next"`);
  }
  return page.map(({ item }) => item);
}
