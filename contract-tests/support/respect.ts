/**
 * Runs an Arazzo file of openapi/workflows/ with Redocly's `respect`, the
 * command the docs give partners, against the suite's target: its inputs as
 * one JSON `--input` (a URL or a token may hold what the `a=b,c=d` form
 * splits on), and the target's API root in place of the description's
 * servers (`--server api=…`). Respect checks every answer against the spec
 * besides the workflow's own success criteria, and writes what it did to a
 * JSON log, which the tests read.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const cli = join(root, 'node_modules/@redocly/cli/bin/cli.js');

/** One step as Respect's JSON log records it: each attempt of a retried step is one of these. */
export interface RespectStep {
  stepId: string;
  status: string;
  request?: { method: string; url: string };
  response?: { statusCode: number; body: unknown };
  checks: Array<{ name: string; passed: boolean; message?: string }>;
}

export interface RespectRun {
  /** The command's exit code: 0 when every workflow of the file passed. */
  exitCode: number | null;
  /** What it printed, for the message of a failed test. */
  output: string;
  /** `success` when every workflow passed. */
  status: string;
  /** The steps in the order they ran, retries included. */
  steps: RespectStep[];
}

interface JsonLog {
  status: string;
  files: Record<string, { executedWorkflows: Array<{ executedSteps: RespectStep[] }> }>;
}

/** Runs `file` (relative to the repository's root) with these inputs against `apiRoot`, and resolves when Respect has exited. */
export async function respect(file: string, inputs: Record<string, string>, apiRoot: string): Promise<RespectRun> {
  const folder = mkdtempSync(join(tmpdir(), 'respect-'));
  const logFile = join(folder, 'log.json');
  try {
    const child = spawn(
      process.execPath,
      [cli, 'respect', file, '--input', JSON.stringify(inputs), '--server', `api=${apiRoot}`, '--json-output', logFile, '--execution-timeout', '170000'],
      {
        cwd: root,
        // No telemetry, no update check (each a request to a third party), and no colours in what a failed test prints.
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1', FORCE_COLOR: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exitCode = await new Promise<number | null>((done, fail) => {
      child.once('error', fail);
      child.once('close', (code) => done(code));
    });
    let log: JsonLog;
    try {
      log = JSON.parse(readFileSync(logFile, 'utf8')) as JsonLog;
    } catch (error) {
      throw new Error(`redocly respect ${file} wrote no log (exit ${exitCode}): ${(error as Error).message}\n${output}`);
    }
    const steps = Object.values(log.files).flatMap((logged) => logged.executedWorkflows.flatMap((workflow) => workflow.executedSteps));
    return { exitCode, output, status: log.status, steps };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** The ids of the steps that ran, a retried step once. */
export function stepIds(run: RespectRun): string[] {
  return run.steps.map((step) => step.stepId).filter((id, index, ids) => id !== ids[index - 1]);
}

/** The answer of the last attempt of a step. */
export function answerOf<T>(run: RespectRun, stepId: string): T {
  const step = run.steps.findLast((candidate) => candidate.stepId === stepId);
  if (!step?.response) throw new Error(`Step ${stepId} did not run, or got no answer:\n${run.output}`);
  return step.response.body as T;
}
