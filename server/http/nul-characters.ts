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
import { HttpProblem, type FieldError } from '../lib/problems.ts';

const encodedNul = /%00/i;

/** Refuses a URL whose path or query holds %00, before any route (and the token lookup) sees it. */
export function refuseNulInUrl(req: Request, _res: Response, next: NextFunction) {
  const url = req.originalUrl;
  if (!encodedNul.test(url) && !url.includes('\u0000')) return next();
  const query = url.indexOf('?');
  const where = query >= 0 && encodedNul.test(url.slice(query)) ? 'query' : 'path';
  next(
    new HttpProblem('validation-error', `The URL's ${where} holds an encoded NUL character (%00), which no identifier or parameter may hold. Remove it.`, {
      errors: [{ detail: `the ${where} must not hold %00` }],
    }),
  );
}

/**
 * No body of this API nests deeper than a few levels. JSON.parse takes any
 * depth, but code that walks a value recursively (this check, the validator,
 * JSON.stringify) overflows the stack on a megabyte of "[[[[…": refused here.
 */
export const maxBodyDepth = 32;

/**
 * Refuses a parsed JSON body with U+0000 in any string or key, naming each
 * place by JSON pointer, or one nested deeper than maxBodyDepth. The walk
 * keeps its own stack, so no body can overflow the call stack.
 */
export function refuseNulInBody(req: Request, _res: Response, next: NextFunction) {
  const found: FieldError[] = [];
  const pending: Array<{ value: unknown; pointer: string; depth: number }> = [{ value: req.body, pointer: '#', depth: 0 }];
  while (pending.length > 0 && found.length < 20) {
    const { value, pointer, depth } = pending.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) found.push({ pointer, detail: 'must not hold a NUL character (U+0000)' });
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= maxBodyDepth) {
      return next(new HttpProblem('validation-error', `The body nests deeper than ${maxBodyDepth} levels, which no operation takes.`, { errors: [{ pointer, detail: 'is nested too deep' }] }));
    }
    const entries: Array<[string, unknown]> = Array.isArray(value) ? value.map((item, index) => [String(index), item]) : Object.entries(value);
    for (const [key, item] of entries) {
      // RFC 6901 section 3: "~" is written "~0" and "/" is written "~1".
      const child = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (key.includes('\u0000')) found.push({ pointer: child, detail: 'the key must not hold a NUL character (U+0000)' });
      pending.push({ value: item, pointer: child, depth: depth + 1 });
    }
  }
  if (found.length === 0) return next();
  found.sort((a, b) => (a.pointer! < b.pointer! ? -1 : 1));
  next(new HttpProblem('validation-error', `The body holds a NUL character (U+0000) at ${found.map((field) => field.pointer).join(', ')}. Remove it.`, { errors: found }));
}
