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
});
