/**
 * U+0000 in input. PostgreSQL cannot store it in text ("invalid byte
 * sequence for encoding UTF8: 0x00"), SQLite would store it, and no id, name
 * or option of this API has a use for it. So it is refused at the edge, with
 * a 400 that names where it was, the same on both stores; the stores refuse
 * it too (NulCharacterError in store/db.ts), for anything that gets past.
 *
 * Headers cannot carry it: Node's HTTP parser refuses a raw NUL in a header
 * (RFC 9110 section 5.5: field values are visible characters, spaces and
 * tabs), and the server's clientError hook answers that with a problem.
 */
import type { NextFunction, Request, Response } from 'express';
import { HttpProblem, type FieldError } from './problem.ts';

const encodedNul = /%00/i;

/** Refuses a URL whose path or query holds %00, before any route (and the token lookup) sees it. */
export function refuseNulInUrl(req: Request, _res: Response, next: NextFunction) {
  const url = req.originalUrl;
  if (!encodedNul.test(url) && !url.includes('\u0000')) return next();
  const query = url.indexOf('?');
  const where = query >= 0 && encodedNul.test(url.slice(query)) ? 'query' : 'path';
  next(
    new HttpProblem(400, 'validation-error', `The URL's ${where} holds an encoded NUL character (%00), which no identifier or parameter may hold. Remove it.`, {
      errors: [{ detail: `the ${where} must not hold %00` }],
    }),
  );
}

/** Refuses a parsed JSON body with U+0000 in any string or key, naming each place by JSON pointer. */
export function refuseNulInBody(req: Request, _res: Response, next: NextFunction) {
  const found: FieldError[] = [];
  findNul(req.body, '#', found);
  if (found.length === 0) return next();
  next(new HttpProblem(400, 'validation-error', `The body holds a NUL character (U+0000) at ${found.map((field) => field.pointer).join(', ')}. Remove it.`, { errors: found }));
}

function findNul(value: unknown, pointer: string, found: FieldError[]): void {
  if (found.length >= 20) return;
  if (typeof value === 'string') {
    if (value.includes('\u0000')) found.push({ pointer, detail: 'must not hold a NUL character (U+0000)' });
  } else if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) findNul(item, `${pointer}/${index}`, found);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      // RFC 6901 section 3: "~" is written "~0" and "/" is written "~1".
      const escaped = key.replace(/~/g, '~0').replace(/\//g, '~1');
      if (key.includes('\u0000')) found.push({ pointer: `${pointer}/${escaped}`, detail: 'the key must not hold a NUL character (U+0000)' });
      findNul(item, `${pointer}/${escaped}`, found);
    }
  }
}
