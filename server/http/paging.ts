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
 * there when the listing began is skipped.
 *
 * The cursor is opaque: its sort key (the last item's id and its sort
 * value, a creation time say) is encrypted and authenticated with
 * AES-256-GCM under a key derived from the server's signing secret, with the
 * list (the path) as additional authenticated data. So a client reads
 * nothing from it, cannot forge or alter one, nor carry one to another
 * list: each fails GCM's authentication, and a bad cursor is a 400 naming
 * the `cursor` parameter. Each cursor has a random 96-bit IV; NIST SP
 * 800-38D §8.3 bounds random IVs under one key: "The total number of
 * invocations of the authenticated encryption function shall not exceed
 * 2^32", far more cursors than a server makes in the life of its signing
 * secret.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { derivedKey } from '../signing/derived-keys.ts';
import type { Response } from 'express';
import type { Config } from '../config.ts';
import { apiRoot } from '../lib/api-root.ts';

/** What paging uses of the server: the secret its cursor key comes from, and the address of its links. */
type Ports = { config: Pick<Config, 'signingSecret' | 'publicUrl'> };
import { badRequest } from '../lib/problems.ts';
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

/** GCM's recommended IV length (NIST SP 800-38D §5.2.1.1: "For IVs, it is recommended that implementations restrict support to the length of 96 bits"). */
const IV_BYTES = 12;
/** GCM's full tag length, 128 bits. */
const TAG_BYTES = 16;

/** The cursor key of a signing secret: a key of its own, so no other use of the secret (URL signatures, sessions) shares it. */
const cursorKey = (secret: Buffer) => derivedKey(secret, 'audio-share paging cursor v2');

/** The list a cursor belongs to, as GCM's additional authenticated data. */
const aadOf = (list: string) => Buffer.from(`paging\n${list}`, 'utf8');

export function encodeCursor(ctx: Ports, list: string, key: SortKey): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', cursorKey(ctx.config.signingSecret), iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aadOf(list));
  const sealed = Buffer.concat([cipher.update(JSON.stringify(key), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url');
}

/** The 400 of a cursor this list did not give, naming the `cursor` parameter. */
const refuseCursor = (why: string) =>
  badRequest(`The cursor is not one this list gave: ${why}. Use the cursor of the rel="next" link exactly as it came, on the same list, or leave it out to start again.`, [
    { parameter: 'cursor', detail: why },
  ]);

export function decodeCursor(ctx: Ports, list: string, cursor: string): SortKey {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw refuseCursor('it is malformed (not base64url)');
  const bytes = Buffer.from(cursor, 'base64url');
  if (bytes.length <= IV_BYTES + TAG_BYTES) throw refuseCursor('it is malformed (too short)');
  const decipher = createDecipheriv('aes-256-gcm', cursorKey(ctx.config.signingSecret), bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(aadOf(list));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  let json: string;
  try {
    json = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    // final() throws when the tag does not authenticate the ciphertext and the list.
    throw refuseCursor('it does not authenticate (altered, made up, or from another list)');
  }
  let key: unknown;
  try {
    key = JSON.parse(json);
  } catch {
    key = undefined;
  }
  if (!Array.isArray(key) || !key.every((part) => typeof part === 'string' || typeof part === 'number')) throw refuseCursor('it is malformed');
  return key;
}

/** What a request asks of a list: a page, of at most `limit` items after the sort key `after` (from the start without one). */
export interface PageAsked {
  limit: number;
  after: SortKey | undefined;
}

/** Whether the request asks for a page: it names `limit` or `cursor`. Without either, the list answers whole, as before paging. */
export function asksForPage(req: ListRequest): boolean {
  return req.query.limit !== undefined || typeof req.query.cursor === 'string';
}

/**
 * The page the request asks for; undefined when it asks for none. A list
 * read by keyset in its store passes `shape`, the types of its sort key's
 * parts, so that a key of another form is refused like any bad cursor
 * instead of reaching the query. (Only a cursor sealed under this server's
 * secret for this very list gets here, so that means a server whose list
 * changed its key between two pages.)
 */
export function pageAsked(ctx: Ports, req: ListRequest, shape?: Array<'number' | 'string'>): PageAsked | undefined {
  if (!asksForPage(req)) return undefined;
  const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : undefined;
  // The validator has checked limit against the spec (an integer from 1 to MAX_PAGE_LIMIT).
  const limit = req.query.limit === undefined ? DEFAULT_PAGE_LIMIT : Number(req.query.limit);
  const after = cursor === undefined ? undefined : decodeCursor(ctx, listOf(req), cursor);
  if (after && shape && (after.length !== shape.length || after.some((part, i) => typeof part !== shape[i]))) throw refuseCursor('it is malformed');
  return { limit, after };
}

/**
 * The page of a list read by keyset, where the store did the cutting:
 * `read` holds, in the list's order, the items after `asked.after`, at most
 * `asked.limit + 1` of them. The one past the limit is not sent: it only
 * tells that more follow, and then the Link header is set on `res`, its
 * cursor the sort key (`keyOf`) of the page's last item.
 */
export function keysetPage<T>(ctx: Ports, req: ListRequest, res: Response, asked: PageAsked, read: T[], keyOf: (item: T) => SortKey): T[] {
  if (read.length <= asked.limit) return read;
  const page = read.slice(0, asked.limit);
  const list = listOf(req);
  const next = new URL(`${apiRoot(ctx.config)}${list}`);
  for (const [name, value] of Object.entries(req.query)) if (typeof value === 'string' && name !== 'cursor') next.searchParams.set(name, value);
  next.searchParams.set('limit', String(asked.limit));
  next.searchParams.set('cursor', encodeCursor(ctx, list, keyOf(page[page.length - 1])));
  // RFC 8288 section 3: Link = #link-value, where link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param ). Appended: a
  // deprecated list's answer carries the changelog's links too (http/deprecation.ts).
  res.append('Link', `<${next.href}>; rel="next"`);
  return page;
}

/**
 * The page of `items` the request asks for, in the order of `keyOf`, with
 * the Link header set on `res` when more follow; all of `items`, untouched,
 * when the request asks for no page. For lists read whole from the store;
 * a large one reads only its page (pageAsked, its store's keyset read,
 * keysetPage).
 */
export function pageOf<T>(ctx: Ports, req: ListRequest, res: Response, items: T[], keyOf: (item: T) => SortKey): T[] {
  const asked = pageAsked(ctx, req);
  if (!asked) return items;
  const keyed = items.map((item) => ({ item, key: keyOf(item) })).sort((a, b) => compareKeys(a.key, b.key));
  const start = asked.after === undefined ? 0 : keyed.findIndex(({ key }) => compareKeys(key, asked.after!) > 0);
  const read = start < 0 ? [] : keyed.slice(start, start + asked.limit + 1);
  return keysetPage(ctx, req, res, asked, read, ({ key }) => key).map(({ item }) => item);
}
