/**
 * Checks of refusals that raw (non-client) calls of the contract suite share:
 * a problem document (RFC 9457: "application/problem+json"), and a batch of
 * validation refusals, each naming what it refused.
 */
import { expect } from 'vitest';
import type { Schemas } from '../../generated/client.ts';

/** The problem a refusal carries, checked to be one by its media type. */
export async function problemOf(res: Response): Promise<Schemas['Problem']> {
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  return res.json();
}

/** Each call is refused with 400, a validation problem whose errors include one matching the offending header or parameter. */
export async function expectValidationRefusals(refusals: Array<[call: string, pending: Promise<Response>, offending: Record<string, string>]>): Promise<void> {
  for (const [call, pending, offending] of refusals) {
    const res = await pending;
    expect(res.status, call).toBe(400);
    const problem = await problemOf(res);
    expect(problem.type, call).toBe('/problems/validation-error');
    expect(problem.errors, call).toEqual(expect.arrayContaining([expect.objectContaining(offending)]));
  }
}
