/**
 * The mock's `Prefer` request header, as Prism's own server reads it: which
 * documented response to answer with (`code=404`), which named example of it
 * (`example=…`), and whether to make one up from the schema instead of using
 * the examples (`dynamic=true`, with `seed=…` for a repeatable one).
 *
 * RFC 7240 section 2: `Prefer = 1#preference`, `preference = token [ BWS "="
 * BWS word ] *( OWS ";" [ OWS parameter ] )`, where `word = token /
 * quoted-string`. As in Prism, `,` and `;` both separate preferences here.
 * RFC 7240 section 2: "A server that does not recognize or is unable to
 * comply with particular preference tokens in the Prefer header field of a
 * request MUST ignore those tokens", so unknown ones (`return=minimal`) are
 * ignored; a value this mock cannot read is refused, since the caller
 * clearly meant it for the mock.
 */
import { HttpProblem } from '../server/lib/problems.ts';

export interface MockPreferences {
  code?: number;
  exampleKey?: string;
  dynamic?: boolean;
  seed?: string;
}

export function parsePrefer(header: string | undefined): MockPreferences | HttpProblem {
  const preferences: MockPreferences = {};
  if (!header) return preferences;
  for (const part of header.split(/[,;]/)) {
    const match = /^\s*([^=\s]+)\s*(?:=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s"]*)))?\s*$/.exec(part);
    if (!match) continue;
    const name = match[1].toLowerCase();
    const value = match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : match[3];
    if (name === 'code') {
      if (!value || !/^[1-5]\d\d$/.test(value)) return refused(`code=${value ?? ''} is not a status code: write it as three digits, for example Prefer: code=404.`);
      preferences.code = Number(value);
    } else if (name === 'example') {
      if (!value) return refused('example= needs the name of one of the examples of the response, for example Prefer: example=folderScoped.');
      preferences.exampleKey = value;
    } else if (name === 'dynamic') {
      if (value !== 'true' && value !== 'false') return refused(`dynamic=${value ?? ''} must be true or false.`);
      preferences.dynamic = value === 'true';
    } else if (name === 'seed') {
      if (value) preferences.seed = value;
    }
  }
  return preferences;
}

export function refused(detail: string): HttpProblem {
  return new HttpProblem('validation-error', `The Prefer header is not one the mock can follow: ${detail}`, { errors: [{ header: 'prefer', detail }] });
}
