/**
 * `npm run bench:readme`: writes bench/README.md's list of parts from the parts themselves (bench/parts/index.ts, in
 * its order), each part's paragraph from the markdown file its module names, between the two marker comments. The rest
 * of the README (the recorded figures) is left as it is. `--check` (`npm run check:bench-readme`, a step of `npm
 * test`) writes nothing and exits 1 if the README's list is not what the parts say, so that a part changed without its
 * README, or the README edited by hand between the markers, is caught.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { BenchPart } from './lib/part.ts';
import { parts } from './parts/index.ts';

export const BEGIN = '<!-- The list of parts is made by `npm run bench:readme` from bench/parts/ (each part\'s .md file): edit those, not this. -->';
export const END = '<!-- End of the list of parts. -->';

/** A part's paragraph as a bullet of the list: `- ` before its first line, two spaces before the others. */
function bullet(paragraph: string): string {
  return paragraph
    .trimEnd()
    .split('\n')
    .map((line, i) => (i === 0 ? `- ${line}` : line === '' ? '' : `  ${line}`))
    .join('\n');
}

/** The list of parts, as it stands between the markers. */
export function partsList(all: readonly BenchPart[], read: (url: URL) => string = (url) => readFileSync(url, 'utf8')): string {
  return all.map((part) => bullet(read(part.readme))).join('\n');
}

/** `readme` with its list between the markers replaced by `list`; throws when the markers are missing. */
export function withList(readme: string, list: string): string {
  const begin = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`bench/README.md has lost its markers: the list of parts goes between "${BEGIN}" and "${END}".`);
  return `${readme.slice(0, begin + BEGIN.length)}\n${list}\n${readme.slice(end)}`;
}

const file = resolve(import.meta.dirname, 'README.md');
const readme = readFileSync(file, 'utf8');
const wanted = withList(readme, partsList(parts));
if (process.argv.includes('--check')) {
  if (wanted !== readme) {
    console.error("bench/README.md's list of parts is not what bench/parts/ says: run `npm run bench:readme` (and edit the parts' .md files, not the README, between its markers).");
    process.exit(1);
  }
  console.log(`bench/README.md lists the bench's ${parts.length} parts as bench/parts/ says.`);
} else if (wanted !== readme) {
  writeFileSync(file, wanted);
  console.log(`bench/README.md: the list of its ${parts.length} parts written from bench/parts/.`);
} else {
  console.log('bench/README.md: the list of parts was already up to date.');
}
