/**
 * The test reporter of every vitest run (see vitest.config.ts): vitest's
 * verbose reporter, one line per test with its whole describe path, plus the
 * store the test ran on, so that a test that runs on SQLite and on
 * PostgreSQL (or a contract suite that runs on the mock, SQLite and
 * PostgreSQL) never prints the same line twice:
 *
 *    ✓  server  [postgres] server/jobs/job-queue.test.ts > job queue on postgres > …
 *    ✓  contract  [sqlite] contract-tests/players.test.ts > players > …
 *
 * The store comes from, in this order:
 *   - `meta.store` of the test or one of its suites, for a harness that sets it;
 *   - the describe path: the suites of `describe.each(backends)` are named "… on sqlite" / "… on postgres";
 *   - for the contract project, its target: CONTRACT_TARGET (mock by default), or "remote" with CONTRACT_BASE_URL.
 * A test that uses no store (a pure function, the configuration) gets no label.
 */
import type { RunnerTask } from 'vitest';
import type { TestCase, TestModule, TestSuite } from 'vitest/node';
import { VerboseReporter } from 'vitest/node';

/** What the label is read from: the test, then its suites outwards. */
export interface LabelSource {
  /** The test's name, then each enclosing suite's. */
  names: string[];
  /** The test's meta, then each enclosing suite's. */
  metas: object[];
  projectName: string;
}

export function contractTarget(env: Record<string, string | undefined> = process.env): string {
  if (env.CONTRACT_BASE_URL) return env.CONTRACT_TARGET ?? 'remote';
  return env.CONTRACT_TARGET ?? 'mock';
}

/** The store a test ran on, or undefined for a test that uses none. */
export function storeOf(source: LabelSource, env: Record<string, string | undefined> = process.env): string | undefined {
  for (const meta of source.metas) {
    const store = (meta as { store?: unknown }).store;
    if (typeof store === 'string') return store;
  }
  for (const name of source.names) {
    const named = /\bon (sqlite|postgres)\b/i.exec(name)?.[1];
    if (named) return named.toLowerCase();
  }
  if (source.projectName === 'contract') return contractTarget(env);
  return undefined;
}

/** From a test case of the reporter API. */
function fromTestCase(test: TestCase): LabelSource {
  const source: LabelSource = { names: [test.name], metas: [test.meta()], projectName: test.project.name };
  for (let parent = test.parent; parent.type === 'suite'; parent = parent.parent) {
    source.names.push(parent.name);
    source.metas.push(parent.meta());
  }
  return source;
}

/** From a runner task, which the list of failures hands over. */
function fromTask(task: RunnerTask): LabelSource {
  const source: LabelSource = { names: [], metas: [], projectName: task.file.projectName ?? '' };
  // Up to the file, whose name is its path.
  for (let current: RunnerTask | undefined = task; current && current !== task.file; current = current.suite) {
    source.names.push(current.name);
    source.metas.push(current.meta);
  }
  return source;
}

export default class StoreLabelReporter extends VerboseReporter {
  protected override getEntityPrefix(entity: TestCase | TestModule | TestSuite): string {
    const prefix = super.getEntityPrefix(entity);
    if (entity.type !== 'test') return prefix;
    const store = storeOf(fromTestCase(entity));
    return store ? `${prefix} [${store}]` : prefix;
  }

  /** Used in the list of failures at the end. */
  protected override getFullName(task: RunnerTask, separator?: string): string {
    const name = super.getFullName(task, separator);
    const store = task.type === 'test' ? storeOf(fromTask(task)) : undefined;
    return store ? `[${store}] ${name}` : name;
  }
}
