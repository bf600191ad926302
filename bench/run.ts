/**
 * `npm run bench`: the server against baselines taken in the same run, on
 * the same machine. Every server runs in a process of its own; the load
 * comes from this process.
 *
 * Each part is a module of bench/parts/, listed in bench/parts/index.ts in
 * the order a run takes them; bench/README.md says what each measures.
 * `npm run bench -- --list` prints the parts.
 *
 * `npm run bench -- view bundle` runs only the parts named (or BENCH_PARTS);
 * a missed budget or target makes the run exit non-zero once every part
 * has printed its figures.
 */
import { spawnSync } from 'node:child_process';
import { createReport } from './lib/part.ts';
import { seconds, uploadBytes } from './lib/settings.ts';
import { parts } from './parts/index.ts';

const names = parts.map((part) => part.name);
const named = process.argv.slice(2).flatMap((arg) => arg.split(',')).filter(Boolean);
if (named.includes('--list')) {
  for (const part of parts) console.log(`${part.name.padEnd(16)} ${part.title}: ${part.summary}`);
  process.exit(0);
}
// The parts to run, named on the command line (`npm run bench -- view bundle`) or in BENCH_PARTS; all by default.
const chosen = new Set(named.length > 0 ? named : (process.env.BENCH_PARTS ?? names.join(',')).split(','));
const unknownParts = [...chosen].filter((part) => !names.includes(part));
if (unknownParts.length > 0) throw new Error(`No bench part ${unknownParts.join(', ')}; the parts are ${names.join(', ')}.`);
const report = createReport();
const { say, failures } = report;

spawnSync('taskset', ['-pc', '0', String(process.pid)]);
say(`# Bench, ${new Date().toISOString()}, node ${process.version}, median of ${process.env.BENCH_ROUNDS ?? 3} rounds of ${seconds} s per read run, ${uploadBytes / 1024 ** 2} MiB upload`);

for (const part of parts) if (chosen.has(part.name)) await part.run(report);

if (failures.length > 0) {
  for (const failure of failures) say(`MISSED: ${failure}`);
  process.exitCode = 1;
}
