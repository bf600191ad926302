/**
 * `npm run check:breaking`: the spec about to be released
 * (generated/openapi.json, the bundle of openapi/) against the last released
 * one (the newest of openapi/released/releases.json, whose bundle is
 * openapi/released/<version>.json, a committed snapshot). Exits 1, listing
 * each breaking change with its JSON path, unless there is none or
 * `info.version`'s major went up; the rules are in diff.ts.
 *
 *   tsx scripts/breaking/check-breaking.ts [--base <released.json>] [--revision <spec.json>]
 *
 * Exit codes: 0 allowed, 1 breaking changes without a new major version,
 * 2 a file could not be read.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type JsonObject, judge } from './diff.ts';
import { releases } from './releases.ts';

const root = resolve(import.meta.dirname, '../..');
/** The bundle of the newest release. */
export const releasedSpecPath = () => releases()[0].file;
export const currentSpecPath = resolve(root, 'generated/openapi.json');

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

export function main(args: string[]): number {
  let base: JsonObject;
  let revision: JsonObject;
  try {
    const basePath = option(args, '--base') ?? releasedSpecPath();
    const revisionPath = option(args, '--revision') ?? currentSpecPath;
    base = JSON.parse(readFileSync(basePath, 'utf8')) as JsonObject;
    revision = JSON.parse(readFileSync(revisionPath, 'utf8')) as JsonObject;
  } catch (error) {
    console.error(`check:breaking: ${(error as Error).message}`);
    return 2;
  }
  const verdict = judge(base, revision);
  (verdict.ok ? console.log : console.error)(verdict.text);
  return verdict.ok ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exit(main(process.argv.slice(2)));
