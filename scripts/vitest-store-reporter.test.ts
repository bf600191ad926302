import { describe, expect, it } from 'vitest';
import { storeOf } from './vitest-store-reporter.ts';

type Node = { name: string; meta: Record<string, unknown>; suite?: Node; file?: { projectName?: string } };
const suite = (name: string, parent?: Node, meta: Record<string, unknown> = {}): Node => ({ name, meta, suite: parent });
const test = (name: string, parent: Node | undefined, projectName: string, meta: Record<string, unknown> = {}): Node => ({
  name,
  meta,
  suite: parent,
  file: { projectName },
});

describe('the store label of a test', () => {
  it('comes from the suite name that describe.each gives, which names the store', () => {
    expect(storeOf(test('claims a job', suite('job queue on postgres'), 'server'))).toBe('postgres');
    expect(storeOf(test('lists', suite('artwork', suite('uploads on sqlite')), 'server'))).toBe('sqlite');
  });

  it('comes from meta.store first, when a harness sets it', () => {
    expect(storeOf(test('answers 404', suite('HTTP behaviour', undefined, { store: 'sqlite' }), 'server'))).toBe('sqlite');
  });

  it('is the target for the contract suite, which runs the same tests on each', () => {
    const contract = test('creates a player', suite('players'), 'contract');
    expect(storeOf(contract, { CONTRACT_TARGET: 'postgres' })).toBe('postgres');
    expect(storeOf(contract, {})).toBe('mock');
    expect(storeOf(contract, { CONTRACT_BASE_URL: 'http://host/api/v1' })).toBe('remote');
  });

  it('is absent for a test that uses no store', () => {
    expect(storeOf(test('names every bad value', suite('configuration'), 'server'))).toBeUndefined();
    // "on" followed by something else is not a store.
    expect(storeOf(test('runs on postgresql-like names', suite('configuration'), 'server'))).toBeUndefined();
  });
});
