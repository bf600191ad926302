/**
 * The problem catalogue (PROBLEMS) and the spec's list of problem types
 * (openapi.yaml, "Errors") say the same: every slug the server can send is
 * documented there with the status it is sent with, and every documented
 * one is in the catalogue. A problem raised by its slug carries that status.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HttpProblem, PROBLEMS } from './problems.ts';

const specIntro = readFileSync(resolve(import.meta.dirname, '../../openapi/openapi.yaml'), 'utf8');
const documented = Object.fromEntries([...specIntro.matchAll(/`\/problems\/([a-z-]+)` \((\d{3})\)/g)].map(([, slug, status]) => [slug, Number(status)]));

describe('the problem catalogue', () => {
  it('lists exactly the problem types the spec documents, each with the status the spec gives it', () => {
    expect(Object.keys(documented).length).toBeGreaterThan(20);
    expect(Object.fromEntries(Object.entries(PROBLEMS).map(([slug, { status }]) => [slug, status]))).toEqual(documented);
  });

  it('raises a problem by its slug, with the status and title of the catalogue', () => {
    const problem = new HttpProblem('player-expired', 'This link expired on 2026-01-01.');
    expect(problem.status).toBe(410);
    expect(problem.body('req_1')).toEqual({ type: '/problems/player-expired', title: 'This link has expired', status: 410, detail: 'This link expired on 2026-01-01.', instance: 'req_1' });
  });
});
