import { describe, expect, it } from 'vitest';
import { etagOf, ifMatchHolds, parseIfMatch, requireIfMatch } from './preconditions.ts';
import { HttpProblem } from '../lib/problems.ts';

describe('If-Match (RFC 9110 §13.1.1)', () => {
  it('parses "*", a single tag, and a list with weak tags and empty elements', () => {
    expect(parseIfMatch(undefined)).toBeUndefined();
    expect(parseIfMatch(' * ')).toEqual({ any: true });
    expect(parseIfMatch('"3"')).toEqual({ any: false, tags: [{ weak: false, opaque: '3' }] });
    expect(parseIfMatch(', W/"2" ,"3",')).toEqual({ any: false, tags: [{ weak: true, opaque: '2' }, { weak: false, opaque: '3' }] });
  });

  it('refuses a header that is not "*" or quoted entity tags with 400 naming the header', () => {
    for (const bad of ['3', '"3', 'W/3', '"3" "4"', '*, "3"', ' , ', '"a b"']) {
      let problem: unknown;
      try {
        parseIfMatch(bad);
      } catch (error) {
        problem = error;
      }
      expect(problem, bad).toBeInstanceOf(HttpProblem);
      expect(problem, bad).toMatchObject({ status: 400, extra: { errors: [{ header: 'if-match' }] } });
    }
  });

  it('holds without a header, for "*", and for a strong tag of the current version; never for a weak one', () => {
    expect(ifMatchHolds(undefined, 4)).toBe(true);
    expect(ifMatchHolds(parseIfMatch('*'), 4)).toBe(true);
    expect(ifMatchHolds(parseIfMatch(etagOf(4)), 4)).toBe(true);
    expect(ifMatchHolds(parseIfMatch('"3", "4"'), 4)).toBe(true);
    expect(ifMatchHolds(parseIfMatch('"3"'), 4)).toBe(false);
    expect(ifMatchHolds(parseIfMatch('W/"4"'), 4)).toBe(false);
    expect(ifMatchHolds(parseIfMatch('"04"'), 4)).toBe(false);
  });

  it('answers a failed precondition with a 412 problem that names the current ETag and says how to retry', () => {
    expect(() => requireIfMatch(parseIfMatch('"1"'), 2, 'Player ply_x', 'GET /players/ply_x')).toThrow(
      expect.objectContaining({ status: 412, type: 'precondition-failed', detail: expect.stringMatching(/now at ETag "2"\. Nothing was changed\. GET \/players\/ply_x again/) }),
    );
    expect(() => requireIfMatch(parseIfMatch('"2"'), 2, 'Player ply_x', 'GET /players/ply_x')).not.toThrow();
  });
});
