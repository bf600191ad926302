/**
 * The store's conformance suite. Every backend runs it unchanged
 * (store.test.ts), so the SQL the repositories share behaves the same on
 * SQLite and PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { openStore } from './store.ts';
import { useTestStore, type Backend } from '../testing/databases.ts';
import { newBox } from '../resources/boxes/boxes-service.ts';

export function storeConformance(backend: Backend) {
  describe(`store on ${backend}`, () => {
    const t = useTestStore(backend);

    async function project(ownerEmail = 'owner@example.com') {
      const owner = await t.store.users.findOrCreate(ownerEmail, 1);
      const id = `prj_${Math.random().toString(36).slice(2, 12)}`;
      await t.store.projects.insert({ id, ownerId: owner.id, name: 'P', color: '#000000', sortBy: null, artworkId: null, timeCreated: 1, timeModified: 1 });
      return { id, owner };
    }

    it('applies migrations once: opening the same database again keeps its data', async () => {
      await t.store.users.findOrCreate('kept@example.com', 1);
      const again = await openStore(t.database);
      expect(await again.users.findByEmail('kept@example.com')).toBeDefined();
      await again.close();
    });

    it('finds or creates users by email, case-insensitively', async () => {
      const first = await t.store.users.findOrCreate('Mixed@Example.com', 5);
      const second = await t.store.users.findOrCreate('mixed@example.COM ', 6);
      expect(second.id).toBe(first.id);
      expect(first.email).toBe('mixed@example.com');
      expect(first.preferences).toEqual({ options: {} });
    });

    it('stores tokens hashed, finds active ones and revokes them', async () => {
      const user = await t.store.users.findOrCreate('tokens@example.com', 1);
      const { id, secret } = await t.store.tokens.create(user.id, 'laptop', 10);
      const [raw] = await t.store.db.query<{ token_hash: string }>('SELECT token_hash FROM tokens WHERE id = $1', [id]);
      expect(raw.token_hash).not.toContain(secret);
      expect(raw.token_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(await t.store.tokens.findActiveUser(secret)).toEqual({ id: user.id, email: 'tokens@example.com' });
      expect(await t.store.tokens.revoke(id, 11)).toBe(true);
      expect(await t.store.tokens.revoke(id, 12)).toBe(false);
      expect(await t.store.tokens.findActiveUser(secret)).toBeUndefined();
      expect((await t.store.tokens.list('tokens@example.com'))[0]).toMatchObject({ id, label: 'laptop', timeRevoked: 11 });
    });

    it('gives the owner the owner role, collaborators their highest invited role, others none', async () => {
      const { id: projectId, owner } = await project();
      const base = { projectId, ownerId: owner.id, color: '#000000', public: true, folderId: null, boxIds: null, options: {} as never, upload: null, payment: null, timeCreated: 1, timeModified: 1 };
      await t.store.players.insert({ ...base, id: `ply_a${projectId}`, name: 'A', collaborators: [{ email: 'guest@example.com', role: 'viewer' }] });
      await t.store.players.insert({ ...base, id: `ply_b${projectId}`, name: 'B', collaborators: [{ email: 'guest@example.com', role: 'editor' }] });
      const guest = await t.store.users.findOrCreate('guest@example.com', 1);
      const stranger = await t.store.users.findOrCreate('stranger@example.com', 1);
      expect(await t.store.projects.roleOf(projectId, owner)).toBe('owner');
      expect(await t.store.projects.roleOf(projectId, guest)).toBe('editor');
      expect(await t.store.projects.roleOf(projectId, stranger)).toBeUndefined();
      const listed = await t.store.projects.listForUser(guest);
      expect(listed.filter((p) => p.id === projectId)).toEqual([expect.objectContaining({ id: projectId, role: 'editor' })]);
    });

    it('walks box trees up and down, and keeps children in position order', async () => {
      const { id: projectId } = await project();
      const folder = newBox({ projectId, kind: 'folder', name: 'F', parentId: null, position: 0 }, 1);
      const inner = newBox({ projectId, kind: 'folder', name: 'G', parentId: folder.id, position: 1 }, 1);
      const stack = newBox({ projectId, kind: 'stack', name: 'S', parentId: inner.id, position: 0 }, 1);
      const file = newBox({ projectId, kind: 'file', name: 'f.wav', parentId: stack.id, position: 0, status: 'ready', size: 3, mimeType: 'audio/wav' }, 1);
      for (const box of [folder, inner, stack, file]) await t.store.boxes.insert(box);
      expect(new Set(await t.store.boxes.subtreeIds(folder.id))).toEqual(new Set([folder.id, inner.id, stack.id, file.id]));
      expect(await t.store.boxes.ancestorIds(file.id)).toEqual([stack.id, inner.id, folder.id]);
      expect(await t.store.boxes.nextPosition(projectId, folder.id)).toBe(2);
      expect(await t.store.boxes.nextPosition(projectId, null)).toBe(1);
      expect((await t.store.boxes.listProject(projectId)).map((box) => box.kind)).toEqual(['folder', 'folder', 'stack', 'file']);
      expect(await t.store.boxes.get('prj_other', file.id)).toBeUndefined();
    });

    it('lets an upload be claimed once, released after a failure, and not claimed after completion', async () => {
      const { id: projectId, owner } = await project();
      const upload = {
        id: `upl_${projectId}`, kind: 'file' as const, projectId, userId: owner.id, objectId: 'box_x', name: 'x', contentType: 'audio/wav',
        size: 1, metadata: { destination: 'file' }, expires: 100, timeCreated: 1, timeStarted: null, timeCompleted: null,
      };
      await t.store.uploads.insert(upload);
      expect(await t.store.uploads.claim(upload.id, 2)).toBe(true);
      expect(await t.store.uploads.claim(upload.id, 3)).toBe(false);
      await t.store.uploads.release(upload.id);
      expect(await t.store.uploads.claim(upload.id, 4)).toBe(true);
      await t.store.uploads.complete(upload.id, 5);
      await t.store.uploads.release(upload.id);
      expect(await t.store.uploads.claim(upload.id, 6)).toBe(false);
      expect(await t.store.uploads.get(upload.id)).toMatchObject({ metadata: { destination: 'file' }, timeCompleted: 5 });
    });

    it('rolls a failed transaction back whole', async () => {
      await expect(
        t.store.transaction(async (tx) => {
          await tx.users.findOrCreate('rolled-back@example.com', 1);
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await t.store.users.findByEmail('rolled-back@example.com')).toBeUndefined();
    });

    it('keeps concurrent transactions apart: a statement from outside never joins an open one', async () => {
      let release!: () => void;
      const paused = new Promise<void>((resolve) => (release = resolve));
      const failing = t.store.transaction(async (tx) => {
        await tx.users.findOrCreate('inside@example.com', 1);
        await paused;
        throw new Error('roll back');
      });
      // Issued while the transaction is open; must land even though the transaction rolls back.
      const outside = t.store.users.findOrCreate('outside@example.com', 1);
      setTimeout(release, 20);
      await expect(failing).rejects.toThrow('roll back');
      await outside;
      expect(await t.store.users.findByEmail('outside@example.com')).toBeDefined();
      expect(await t.store.users.findByEmail('inside@example.com')).toBeUndefined();
    });
  });
}
