import { describe, expect, it } from 'vitest';
import { type LabelSource, storeOf } from './vitest-store-reporter.ts';

/** A test named `name` in the suites given from the innermost outwards, with the metas given in the same order. */
const source = (projectName: string, names: string[], metas: object[] = []): LabelSource => ({ names, metas, projectName });

describe('the store label of a test', () => {
  it('comes from the suite name that describe.each gives, which names the store', () => {
    expect(storeOf(source('server', ['claims a job', 'job queue on postgres']))).toBe('postgres');
    expect(storeOf(source('server', ['lists', 'artwork', 'uploads on sqlite']))).toBe('sqlite');
  });

  it('comes from meta.store first, when a harness sets it', () => {
    expect(storeOf(source('server', ['answers 404', 'HTTP behaviour'], [{}, { store: 'sqlite' }]))).toBe('sqlite');
    expect(storeOf(source('server', ['answers 404', 'HTTP behaviour on postgres'], [{ store: 'sqlite' }, {}]))).toBe('sqlite');
  });

  it('is the target for the contract suite, which runs the same tests on each', () => {
    const contract = source('contract', ['creates a player', 'players']);
    expect(storeOf(contract, { CONTRACT_TARGET: 'postgres' })).toBe('postgres');
    expect(storeOf(contract, {})).toBe('mock');
    expect(storeOf(contract, { CONTRACT_BASE_URL: 'http://host/api/v1' })).toBe('remote');
  });

  it('is absent for a test that uses no store', () => {
    expect(storeOf(source('server', ['names every bad value', 'configuration']))).toBeUndefined();
    // "on" followed by something else is not a store.
    expect(storeOf(source('server', ['runs on postgresql-like names', 'configuration']))).toBeUndefined();
  });
});
