/**
 * Which operations the contract suite called, with which statuses. The
 * suite's fetch appends one line per call; `tsx contract-tests/support/coverage.ts
 * <target>` runs after vitest and fails unless every operation of the spec
 * answered at least one valid request (2xx, or a 3xx it documents) and refused at least one invalid
 * one (4xx). (A vitest global teardown cannot fail the run, so this is a step
 * of its own.) An operation the spec marks `x-sandbox-only` exists only on a
 * sandbox server: on a server that is not one, where its documented answer
 * is 404, only the refusal is required.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allOperationIds, sandboxOnlyOperationIds } from './spec-validator.ts';

function coverageFile(target: string): string {
  return resolve(import.meta.dirname, '../../node_modules/.cache/contract-tests', `${target}.calls.jsonl`);
}

export function resetCoverage(target: string): string {
  const file = coverageFile(target);
  mkdirSync(dirname(file), { recursive: true });
  rmSync(file, { force: true });
  return file;
}

export function coverageGaps(target: string): string[] {
  const file = coverageFile(target);
  const calls = existsSync(file)
    ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { operationId: string; status: number })
    : [];
  return allOperationIds.flatMap((operationId) => {
    const statuses = calls.filter((call) => call.operationId === operationId).map((call) => call.status);
    const gaps: string[] = [];
    const mayNotSucceed = sandboxOnlyOperationIds.includes(operationId) && target !== 'mock' && target !== 'sandbox';
    // A redirect the spec documents is a success too: a signed download on a bucket answers 307 to it.
    if (!mayNotSucceed && !statuses.some((status) => status >= 200 && status < 400)) gaps.push(`${operationId}: no successful call`);
    if (!statuses.some((status) => status >= 400 && status < 500)) gaps.push(`${operationId}: no refused invalid request`);
    return gaps;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const target = process.argv[2] ?? 'mock';
  const gaps = coverageGaps(target);
  if (gaps.length > 0) {
    console.error(`The contract suite against "${target}" does not cover every operation:\n  ${gaps.join('\n  ')}`);
    process.exit(1);
  }
  console.log(`The contract suite against "${target}" called all ${allOperationIds.length} operations, validly and invalidly.`);
}
