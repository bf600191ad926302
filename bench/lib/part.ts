/**
 * What a part of the bench is (bench/parts/<name>.ts, listed in bench/parts/index.ts), and what the runner
 * (bench/run.ts) hands it: where to print its figures and where to put the budgets it missed.
 */

export interface BenchPart {
  /** Its name on the command line and in BENCH_PARTS (`npm run bench -- stages`). */
  name: string;
  /** A few words, for `npm run bench -- --list`. */
  title: string;
  /** What it measures, in a sentence or three, for `--list`. */
  summary: string;
  /** Its paragraph of bench/README.md's list of parts (markdown, a file beside the module), which `npm run bench:readme` writes there. */
  readme: URL;
  run(context: PartContext): Promise<void>;
}

export interface PartContext {
  /** Prints one line of figures. */
  say(line: string): void;
  /** Budgets and targets missed: printed again at the end, and the run exits non-zero, once every part has printed its figures. */
  failures: string[];
}

/** The one context of a run: every part prints through it, and its failures decide the exit status. */
export function createReport(): PartContext {
  return { say: (line) => console.log(line), failures: [] };
}
