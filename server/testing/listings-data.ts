/**
 * Large listings for the bench (`npm run bench -- listings`) and the paging
 * tests: an account with thousands of players, made through the store's
 * batch path (PlayerRepository.insertMany, one transaction of multi-row
 * INSERTs) instead of thousands of POST /players. Large projects of boxes
 * come from studio-data.ts `makeBigProject`, which uses the boxes' batch
 * path the same way.
 */
import { newId } from '../lib/ids.ts';
import type { Store } from '../repositories.ts';
import type { NewPlayer } from '../resources/players/player-repository.ts';
import { resolveOptions } from '../resources/players/players-service.ts';

/**
 * `count` players of `projectId` (owned by `ownerId`), as POST /players with
 * a name alone would make them, created a second apart, the newest now;
 * every tenth has a collaborator, so that listings read collaborators too.
 * `sameSecond` players share each creation time, so that the id alone
 * orders them (the tie-break of every listing's order). Answers their ids,
 * oldest first.
 */
export async function makePlayers(store: Store, ownerId: string, projectId: string, count: number, { sameSecond = 1 } = {}): Promise<string[]> {
  const now = Date.now();
  const players: NewPlayer[] = Array.from({ length: count }, (_, i) => {
    const created = now - Math.floor((count - 1 - i) / sameSecond) * 1000;
    return {
      id: newId('ply'),
      projectId,
      ownerId,
      name: `Player ${String(i + 1).padStart(6, '0')}`,
      color: '#3b82f6',
      public: false,
      folderId: null,
      boxIds: null,
      options: resolveOptions(),
      upload: null,
      payment: null,
      collaborators: i % 10 === 0 ? [{ email: `listener-${i}@example.com`, role: 'viewer' }] : [],
      timeCreated: created,
      timeModified: created,
    };
  });
  await store.players.insertMany(players);
  return players.map((player) => player.id);
}
