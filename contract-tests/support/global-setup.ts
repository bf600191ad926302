/**
 * Starts the target the contract suite runs against and hands its address
 * to the tests. CONTRACT_TARGET picks it:
 *   mock      the Prism mock of generated/openapi.json (the default)
 * CONTRACT_BASE_URL (with CONTRACT_TOKEN) points the suite at a server that
 * is already running instead.
 *
 * Every call is recorded (see coverage.ts), so that the run can be checked
 * for covering every operation afterwards.
 */
import type { TestProject } from 'vitest/node';
import { resetCoverage } from './coverage.ts';
import { startPrismMock } from './prism.ts';

export default async function setup(project: TestProject) {
  const target = process.env.CONTRACT_TARGET ?? 'mock';
  project.provide('coverageFile', resetCoverage(target));
  project.provide('target', target);

  let stop = async () => {};
  if (process.env.CONTRACT_BASE_URL) {
    project.provide('baseUrl', process.env.CONTRACT_BASE_URL.replace(/\/$/, ''));
    project.provide('token', process.env.CONTRACT_TOKEN ?? '');
  } else if (target === 'mock') {
    const mock = await startPrismMock();
    project.provide('baseUrl', mock.baseUrl);
    // Prism checks that a bearer token is present, not what it is.
    project.provide('token', 'mock-token');
    stop = mock.stop;
  } else {
    throw new Error(`Unknown CONTRACT_TARGET "${target}". Use "mock", or set CONTRACT_BASE_URL and CONTRACT_TOKEN.`);
  }

  return stop;
}
