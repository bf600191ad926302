/**
 * The released specs: openapi/released/releases.json lists each release,
 * newest first, with its day and a line for partners; the bundle of each is
 * openapi/released/<version>.json, as it was released. The breaking-change
 * gate compares the spec with the newest (check-breaking.ts); the changelog
 * (changelog.ts) is made from all of them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { JsonObject } from './diff.ts';

export const releasedDir = resolve(import.meta.dirname, '../../openapi/released');

export interface Release {
  version: string;
  /** The day it was released, YYYY-MM-DD. */
  date: string;
  /** What it brought, in a sentence for partners. */
  notes?: string;
  /** Its bundle. */
  file: string;
}

/** The releases, newest first; throws, saying what to fix, when the list and the files disagree. */
export function releases(dir = releasedDir): Release[] {
  const listed = JSON.parse(readFileSync(resolve(dir, 'releases.json'), 'utf8')) as Array<{ version: string; date: string; notes?: string }>;
  if (!Array.isArray(listed) || listed.length === 0) throw new Error(`${dir}/releases.json lists no release.`);
  return listed.map((entry, i) => {
    const file = resolve(dir, `${entry.version}.json`);
    if (!existsSync(file)) throw new Error(`Release ${entry.version} is listed in releases.json, but ${file} is missing.`);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(entry.date) || !Number.isFinite(Date.parse(entry.date))) throw new Error(`Release ${entry.version}: date ${JSON.stringify(entry.date)} is not YYYY-MM-DD.`);
    if (i > 0 && entry.date > listed[i - 1].date) throw new Error(`releases.json lists the newest first: ${entry.version} (${entry.date}) comes after ${listed[i - 1].version} (${listed[i - 1].date}).`);
    const version = (JSON.parse(readFileSync(file, 'utf8')) as { info?: { version?: string } }).info?.version;
    if (version !== entry.version) throw new Error(`${file} says info.version ${version}, not ${entry.version}.`);
    return { ...entry, file };
  });
}

/** The bundle of a release. */
export const specOf = (release: Release): JsonObject => JSON.parse(readFileSync(release.file, 'utf8')) as JsonObject;
