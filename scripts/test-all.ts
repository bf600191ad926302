/**
 * `npm test`: every check and every suite, one after another, each run to
 * the end whatever the others did, then one table of what passed and what
 * failed. A failing step never hides the ones after it (with `a && b && c`,
 * one flaky test skipped all three contract suites).
 *
 *   npm test                      every step
 *   npm test -- lint typecheck    only the steps named (see the table below)
 *
 * Each step is an npm script, so any one of them can be rerun alone
 * (`npm run test:server`). The steps run in turn, not at once: the suites
 * start servers and ffmpeg and Chromium, and share the machine's cores.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface Step {
  /** Short name, used in the table and to pick steps from the command line. */
  name: string;
  /** What it checks, for the table. */
  title: string;
  /** A shell command, run from the package root. */
  command: string;
  /** Redocly prints boxed banners (Node.js end of life, Redoc 3) whatever it does; drop them. */
  dropBoxedBanners?: boolean;
}

export interface StepResult {
  step: Step;
  ok: boolean;
  /** The exit code, or the signal that ended the step. */
  exit: number | string;
  ms: number;
  /** vitest's "FAIL …" headings the step printed, each with the line after it (the error), in order. */
  failures: string[];
}

const root = resolve(import.meta.dirname, '..');
const npmRun = (script: string) => `npm run --silent ${script}`;

export const steps: Step[] = [
  { name: 'spec', title: 'spec lint (Redocly, RFC 9457 problems)', command: npmRun('lint:spec'), dropBoxedBanners: true },
  { name: 'generated', title: 'generated/ and the docs up to date', command: npmRun('check:generated') },
  { name: 'breaking', title: 'no breaking change since the released spec, or a new major version', command: npmRun('check:breaking') },
  { name: 'typecheck', title: 'types (tsc)', command: npmRun('typecheck') },
  { name: 'lint', title: 'lint (Biome)', command: npmRun('lint') },
  { name: 'layers', title: 'import rules: layers point down, web/ is browser code, no cycle', command: npmRun('check:layers') },
  { name: 'bench-readme', title: "bench/README.md's list of parts as bench/parts/ says", command: npmRun('check:bench-readme') },
  { name: 'server', title: 'server tests (SQLite, PostgreSQL, Chromium)', command: npmRun('test:server') },
  { name: 'contract:mock', title: 'contract suite on the mock', command: npmRun('test:contract:mock') },
  { name: 'contract:sqlite', title: 'contract suite on SQLite and local disk', command: npmRun('test:contract:sqlite') },
  { name: 'contract:postgres', title: 'contract suite on PostgreSQL and S3 (radosgw)', command: npmRun('test:contract:postgres') },
  { name: 'contract:sandbox', title: 'contract suite on the sandbox (npm run sandbox)', command: npmRun('test:contract:sandbox') },
];

/** Calls `line` with each whole line of a stream that arrives in chunks split anywhere. */
function lineSplitter(line: (text: string) => void): { push(chunk: string): void; end(): void } {
  let pending = '';
  return {
    push(chunk) {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const text of lines) line(text);
    },
    end() {
      if (pending) line(pending);
      pending = '';
    },
  };
}

/**
 * A line filter that drops boxes drawn with ╔ … ╚ and the blank lines
 * around them, and passes everything else through as it comes.
 */
export function boxedBannerFilter(write: (text: string) => void): { push(chunk: string): void; end(): void } {
  let inBox = false;
  let afterBox = false;
  // Blank lines are held back until it is known whether a box follows them.
  let blanks = 0;
  const line = (text: string) => {
    const trimmed = text.trim();
    if (trimmed.startsWith('╔')) {
      inBox = true;
      blanks = 0;
    }
    if (inBox) {
      if (trimmed.startsWith('╚')) {
        inBox = false;
        afterBox = true;
      }
      return;
    }
    if (trimmed === '') {
      if (!afterBox) blanks += 1;
      return;
    }
    afterBox = false;
    write('\n'.repeat(blanks) + `${text}\n`);
    blanks = 0;
  };
  const lines = lineSplitter(line);
  return {
    push: lines.push,
    end() {
      lines.end();
      if (blanks > 0) write('\n'.repeat(blanks));
      blanks = 0;
    },
  };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes start with ESC.
const ansiCodes = /\x1b\[[0-9;]*m/g;
/** At most this many failures of one step are repeated under the table; the step's output has them all. */
const failuresKept = 20;

/**
 * Watches a step's output for vitest's failure headings (` FAIL  server  file > suite > test`)
 * and keeps each with the first line after it, the error. They are printed again under the
 * table: the server step's output is thousands of lines above it, and a log cut to its
 * last lines (a CI page) would otherwise say only that the step failed, not what.
 */
export function failureCollector(): { push(chunk: string): void; end(): void; failures: string[]; omitted(): number } {
  const failures: string[] = [];
  let omitted = 0;
  let awaitingReason = false;
  const line = (text: string) => {
    const plain = text.replace(ansiCodes, '').trim();
    if (plain === '' || plain.startsWith('⎯')) return;
    if (/^FAIL\s/.test(plain)) {
      awaitingReason = failures.length < failuresKept;
      if (awaitingReason) failures.push(plain);
      else omitted += 1;
    } else if (awaitingReason) {
      failures[failures.length - 1] += `\n    ${plain.slice(0, 300)}`;
      awaitingReason = false;
    }
  };
  return { failures, omitted: () => omitted, ...lineSplitter(line) };
}

/** The step under way, so that a SIGTERM sent to us reaches it. */
let running: ChildProcess | undefined;
/** Set on SIGINT or SIGTERM: the step under way ends, and no other starts. */
let interrupted = false;

/** Runs one step, streaming its output to ours, and resolves when it has ended. */
function runStep(step: Step, out: NodeJS.WritableStream, err: NodeJS.WritableStream, cwd: string): Promise<StepResult> {
  const started = performance.now();
  // One per stream, so that the two streams' lines never mix (vitest prints its failures on stderr).
  const collectors = [failureCollector(), failureCollector()];
  const child = spawn(step.command, {
    cwd,
    shell: true,
    // Piped, to watch for failures; a step writing to a terminal keeps its colours.
    stdio: ['ignore', 'pipe', 'pipe'],
    env: out === process.stdout && process.stdout.isTTY ? { ...process.env, FORCE_COLOR: '1' } : process.env,
  });
  const filters = (
    [
      [child.stdout, out, collectors[0]],
      [child.stderr, err, collectors[1]],
    ] as const
  ).flatMap(([from, to, collector]) => {
    if (!from) return [];
    const write = (text: string) => to.write(text);
    const filter = step.dropBoxedBanners === true ? boxedBannerFilter(write) : { push: write, end() {} };
    from.setEncoding('utf8');
    from.on('data', (chunk: string) => {
      filter.push(chunk);
      collector.push(chunk);
    });
    return [filter];
  });
  running = child;
  return new Promise((done) => {
    const finish = (exit: number | string) => {
      running = undefined;
      for (const filter of filters) filter.end();
      const failures = collectors.flatMap((collector) => {
        collector.end();
        const omitted = collector.omitted();
        return omitted > 0 ? [...collector.failures, `… and ${omitted} more, in the step's output above`] : collector.failures;
      });
      done({ step, ok: exit === 0, exit, ms: performance.now() - started, failures });
    };
    child.once('error', (error) => {
      err.write(`${step.name}: could not start "${step.command}": ${error.stack ?? error.message}\n`);
      finish('not started');
    });
    child.once('close', (code, signal) => finish(signal ?? code ?? 'unknown'));
  });
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export function summaryTable(results: StepResult[]): string {
  const rows = results.map((result) => [result.step.name, result.ok ? 'passed' : `FAILED (${result.exit})`, seconds(result.ms), result.step.title]);
  const header = ['step', 'result', 'time', 'what'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const format = (row: string[]) =>
    row
      .map((cell, column) => (column === 2 ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
      .join('  ')
      .trimEnd();
  const total = results.reduce((sum, result) => sum + result.ms, 0);
  const failed = results.filter((result) => !result.ok);
  const verdict =
    failed.length === 0
      ? `All ${results.length} steps passed in ${seconds(total)}.`
      : `${failed.length} of ${results.length} steps failed: ${failed.map((result) => result.step.name).join(', ')}. ` +
        `Rerun one alone with the command in its heading above (for example \`${failed[0].step.command.replace(' --silent', '')}\`).`;
  return [format(header), format(widths.map((width) => '-'.repeat(width))), ...rows.map(format), '', verdict].join('\n');
}

/** Runs the steps one after another, every one of them, and prints the table. */
export async function runSteps(
  chosen: Step[],
  options: { out?: NodeJS.WritableStream; err?: NodeJS.WritableStream; cwd?: string } = {},
): Promise<{ ok: boolean; results: StepResult[] }> {
  const out = options.out ?? process.stdout;
  const err = options.err ?? process.stderr;
  const results: StepResult[] = [];
  for (const [index, step] of chosen.entries()) {
    if (interrupted) break;
    out.write(`\n━━ ${index + 1}/${chosen.length} ${step.name}: ${step.title}  (${step.command})\n`);
    const result = await runStep(step, out, err, options.cwd ?? root);
    out.write(`━━ ${step.name} ${result.ok ? 'passed' : `FAILED (exit ${result.exit})`} in ${seconds(result.ms)}\n`);
    results.push(result);
  }
  const failed = results.filter((result) => !result.ok && result.failures.length > 0);
  if (failed.length > 0) {
    out.write('\nWhat failed, again (each step\'s output above has the whole error):\n');
    for (const result of failed) out.write(`${result.step.name}:\n${result.failures.map((failure) => `  ${failure}\n`).join('')}`);
  }
  out.write(`\n${summaryTable(results)}\n`);
  if (results.length < chosen.length) out.write(`Interrupted: ${chosen.length - results.length} steps did not run.\n`);
  return { ok: results.length === chosen.length && results.every((result) => result.ok), results };
}

/** The steps named on the command line, or all; an unknown name is an error that lists the known ones. */
export function chooseSteps(names: string[], all: Step[] = steps): Step[] {
  if (names.length === 0) return all;
  const unknown = names.filter((name) => !all.some((step) => step.name === name));
  if (unknown.length > 0) throw new Error(`Unknown step ${unknown.join(', ')}. The steps are: ${all.map((step) => step.name).join(', ')}.`);
  return all.filter((step) => names.includes(step.name));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  let chosen: Step[];
  try {
    chosen = chooseSteps(process.argv.slice(2));
  } catch (error) {
    console.error((error as Error).message);
    process.exit(2);
  }
  // Ctrl-C reaches the step too (it is in our process group); SIGTERM is passed on to it.
  process.once('SIGINT', () => {
    interrupted = true;
  });
  process.once('SIGTERM', () => {
    interrupted = true;
    running?.kill('SIGTERM');
  });
  const { ok } = await runSteps(chosen);
  process.exit(ok ? 0 : 1);
}
