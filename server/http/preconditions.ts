/**
 * Versions, ETags and If-Match, shared by every resource that can be
 * updated (projects, players, boxes, the account's preferences).
 *
 * Each of those rows has a version, bumped by every change in the statement
 * or transaction that makes it. Its ETag is that version, quoted: a strong
 * entity tag (RFC 9110 §8.8.3), because the number changes with every change
 * to the stored resource. An update that carries If-Match is applied only
 * when the version it names is still the current one; the check and the
 * write happen in one transaction, with the row locked, so no change can
 * slip in between.
 */
import type { Response } from 'express';
import { badRequest, HttpProblem } from '../lib/problems.ts';

/** A response body with the version of the resource it shows. */
export interface Versioned<T> {
  body: T;
  version: number;
}

/**
 * What an If-Match header asks for. RFC 9110 §13.1.1:
 * `If-Match = "*" / #entity-tag`. Absent (undefined): no condition.
 */
export type IfMatch = { any: true } | { any: false; tags: Array<{ weak: boolean; opaque: string }> };

/** The strong ETag of a version. */
export const etagOf = (version: number): string => `"${version}"`;

// entity-tag = [ weak ] opaque-tag; weak = %s"W/"; opaque-tag = DQUOTE *etagc DQUOTE;
// etagc = %x21 / %x23-7E / obs-text (RFC 9110 §8.8.3).
const entityTag = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/;

/** Parses an If-Match header value; undefined when the header was not sent. */
export function parseIfMatch(header: string | undefined): IfMatch | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value === '*') return { any: true };
  // A list may hold empty elements (RFC 9110 §5.6.1: "a recipient MUST accept … empty list elements").
  const elements = value.split(',').map((element) => element.trim()).filter((element) => element !== '');
  const tags = elements.map((element) => {
    const match = entityTag.exec(element);
    if (!match) {
      throw badRequest(`If-Match must be "*" or a list of ETags, each in double quotes, exactly as the ETag header gave it (for example If-Match: "3"); got ${JSON.stringify(header)}.`, [
        { header: 'if-match', detail: 'must be "*" or a comma-separated list of quoted entity tags' },
      ]);
    }
    return { weak: match[1] !== undefined, opaque: match[2] };
  });
  if (tags.length === 0) throw badRequest('If-Match is empty. Send the ETag of the version you last read, or leave the header out.', [{ header: 'if-match', detail: 'must not be empty' }]);
  return { any: false, tags };
}

/**
 * RFC 9110 §13.1.1: If-Match "*" is true when the resource has a current
 * representation; a list is true when one of its tags matches the current
 * ETag by strong comparison, so a weak tag never matches.
 */
export function ifMatchHolds(ifMatch: IfMatch | undefined, version: number): boolean {
  if (ifMatch === undefined || ifMatch.any) return true;
  const current = etagOf(version).slice(1, -1);
  return ifMatch.tags.some((tag) => !tag.weak && tag.opaque === current);
}

/**
 * Throws 412 when If-Match does not hold for the current version. Called
 * with the row locked, before any rule of the update is checked: RFC 9110
 * §13.2.2 evaluates If-Match before the method's own work, and "the server
 * MUST NOT perform the requested method" when it fails.
 */
export function requireIfMatch(ifMatch: IfMatch | undefined, version: number, what: string, readAgain: string): void {
  if (ifMatchHolds(ifMatch, version)) return;
  throw new HttpProblem('precondition-failed',
    `${what} has changed since the version your If-Match names; it is now at ETag ${etagOf(version)}. Nothing was changed. ${readAgain} again, apply your change to what it returns, and retry with its ETag in If-Match.`,
  );
}

/** Sends a versioned body as JSON with its ETag. */
export function sendVersioned<T>(res: Response, { body, version }: Versioned<T>): void {
  res.setHeader('ETag', etagOf(version));
  res.json(body);
}

/** The If-Match header of a request, parsed. */
export const ifMatchOf = (req: { get(name: string): string | undefined }): IfMatch | undefined => parseIfMatch(req.get('if-match'));
