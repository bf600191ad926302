import { describe, expect, it } from 'vitest';
import { BoxListCache } from './box-list-cache.ts';

describe('box list cache', () => {
  it('serves a listing until the version changes, and forgets the least recently used project', async () => {
    const cache = new BoxListCache<string>(2);
    let computed = 0;
    const compute = (value: string) => async () => {
      computed++;
      return value;
    };
    expect(await cache.get('a', 1, compute('a1'))).toBe('a1');
    expect(await cache.get('a', 1, compute('stale'))).toBe('a1');
    expect(await cache.get('a', 2, compute('a2'))).toBe('a2');
    await cache.get('b', 1, compute('b1'));
    await cache.get('a', 2, compute('unused')); // a is now the most recent
    await cache.get('c', 1, compute('c1')); // evicts b
    expect(await cache.get('b', 1, compute('b1 again'))).toBe('b1 again');
    expect(computed).toBe(5);
  });

  it('hands the listing of an older version to the computation of the new one, and keeps the newest', async () => {
    const cache = new BoxListCache<string>();
    const handed: Array<string | undefined> = [];
    const compute = (value: string) => async (previous: string | undefined) => {
      handed.push(previous);
      return value;
    };
    await cache.get('a', 1, compute('a1'));
    await cache.get('a', 3, compute('a3'));
    expect(handed).toEqual([undefined, 'a1']);
    // A slower request that read version 2 before version 3 landed answers its own listing but does not replace the newer one.
    expect(await cache.get('a', 2, compute('a2'))).toBe('a2');
    expect(await cache.get('a', 3, compute('a3 again'))).toBe('a3');
  });
});
