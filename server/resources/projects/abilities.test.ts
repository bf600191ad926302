/**
 * The `abilities` of Project and Player answers (issue 28, "One door"): for
 * each role they are what the policy grants, and each one agrees with what
 * the API then does when the caller tries. A client that shows a control by
 * an ability must never be shown one the server refuses, nor be denied one
 * it allows.
 */
import { describe, expect, it } from 'vitest';
import type { Role, Schemas } from '../../lib/api-types.ts';
import { canOnProject, playerAbilities, projectAbilities, type ProjectPermission } from '../../auth/policy.ts';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';

const ROLES: Role[] = ['owner', 'admin', 'editor', 'viewer'];

/**
 * The spec's Roles rule: "The owner of a project, and its collaborators with the admin or editor role, can change the
 * project, its boxes and its players. Collaborators with the viewer role can only read." Selling (a paywall) and
 * deleting are the owner's alone (policy.ts PROJECT_POLICY).
 */
const EXPECTED: Record<Role, Schemas['ProjectAbilities']> = {
  owner: { read: true, write: true, sell: true, delete: true },
  admin: { read: true, write: true, sell: false, delete: false },
  editor: { read: true, write: true, sell: false, delete: false },
  viewer: { read: true, write: false, sell: false, delete: false },
};

describe('abilities from the policy', () => {
  it.each(ROLES)('gives %s exactly what the policy grants', (role) => {
    const abilities = projectAbilities(role);
    expect(abilities).toEqual(EXPECTED[role]);
    // The same answer as the check every service asks: one rule, not two.
    for (const permission of ['project:read', 'project:write', 'project:sell', 'project:delete'] as ProjectPermission[]) {
      expect(abilities[permission.slice('project:'.length) as keyof typeof abilities], `${role} ${permission}`).toBe(canOnProject({ kind: 'user', role }, permission));
    }
    expect(playerAbilities(role)).toEqual({ write: EXPECTED[role].write, sell: EXPECTED[role].sell, moderate: EXPECTED[role].write });
  });

  it('gives no role nothing', () => {
    expect(projectAbilities(undefined)).toEqual({ read: false, write: false, sell: false, delete: false });
    expect(playerAbilities(undefined)).toEqual({ write: false, sell: false, moderate: false });
  });
});

describe.each(backends)('abilities in the answers on %s', (backend) => {
  const t = useTestServer(backend);

  it('says for owner, admin, editor and viewer what each may do, and the API then does just that', async () => {
    const email = (role: Role) => `${role}-abilities-${backend}@example.com`;
    const owner = await t.as(email('owner'));
    const project = (await owner.api.POST('/projects', { body: { name: 'Abilities' } })).data!;
    expect(project.abilities).toEqual(EXPECTED.owner);
    const projectid = project.id;
    const { upload } = (await owner.api.uploadFile(projectid, { name: 'Song.wav', mimeType: 'audio/wav' }, new TextEncoder().encode('the song'))).data!;
    const fileid = upload.boxid;
    // The invited roles come from a player's collaborators.
    const invitation = await owner.api.POST('/players', {
      body: { name: 'Team', projectid, collaborators: (['admin', 'editor', 'viewer'] as const).map((role) => ({ email: email(role), role })) },
    });
    expect(invitation.data!.abilities).toEqual({ write: true, sell: true, moderate: true });
    const comment = (await owner.api.POST('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid, fileid } }, body: { message: 'Owner says hi' } })).data!;

    for (const role of ['viewer', 'editor', 'admin', 'owner'] as const) {
      const { api } = await t.as(email(role));
      const path = { params: { path: { projectid } } };
      const said = EXPECTED[role];
      const shown = (await api.GET('/projects/{projectid}', path)).data!;
      expect(shown.role, role).toBe(role);
      expect(shown.abilities, role).toEqual(said);
      // Lists say the same as the project read alone.
      expect((await api.GET('/projects')).data!.find((item) => item.id === projectid)?.abilities, role).toEqual(said);

      // write: change the project, its boxes and its players.
      const renamed = await api.POST('/projects/{projectid}', { ...path, body: { name: `Abilities (${role})` } });
      expect(renamed.response.status, `${role} updates the project`).toBe(said.write ? 200 : 403);
      if (said.write) expect(renamed.data!.abilities).toEqual(said);
      const boxRenamed = await api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid } }, body: { name: `Song (${role}).wav` } });
      expect(boxRenamed.response.status, `${role} renames a file`).toBe(said.write ? 200 : 403);
      const made = await api.POST('/players', { body: { name: `${role}'s link`, projectid } });
      expect(made.response.status, `${role} makes a player`).toBe(said.write ? 200 : 403);
      if (said.write) expect(made.data!.abilities, role).toEqual(playerAbilities(role));

      // The player's abilities, as this role reads it, and each agrees with what updating it does.
      const playerid = invitation.data!.id;
      const player = (await api.GET('/players/{playerid}', { params: { path: { playerid } } })).data!;
      expect(player.abilities, role).toEqual({ write: said.write, sell: said.sell, moderate: said.write });
      const updated = await api.POST('/players/{playerid}', { params: { path: { playerid } }, body: { name: `Team (${role})` } });
      expect(updated.response.status, `${role} updates the player`).toBe(player.abilities.write ? 200 : 403);
      if (player.abilities.write) expect(updated.data!.abilities).toEqual(player.abilities);
      // sell: the paywall. The owner passes the policy and is stopped only by having no payment provider (409).
      const sold = await api.POST('/players/{playerid}', { params: { path: { playerid } }, body: { payment: { price: 500, fulfillment: 'allow-access', recipient: 'everyone' } } });
      expect(sold.response.status, `${role} sets a paywall`).toBe(player.abilities.sell ? 409 : 403);
      if (player.abilities.sell) expect(sold.error).toMatchObject({ type: '/problems/payment-provider-required' });
      // moderate: pin someone else's comment.
      const pinned = await api.POST('/projects/{projectid}/files/{fileid}/comments/{commentid}', { params: { path: { projectid, fileid, commentid: comment.id } }, body: { pinned: true } });
      expect(pinned.response.status, `${role} pins the owner's comment`).toBe(player.abilities.moderate ? 200 : 403);
      // Collaborators: the player's write.
      const collaborators = await api.GET('/players/{playerid}/collaborators', { params: { path: { playerid } } });
      expect(collaborators.response.status, `${role} lists the collaborators`).toBe(player.abilities.write ? 200 : 403);

      // delete: the project, last, and by the owner only.
      const deleted = await api.DELETE('/projects/{projectid}', path);
      expect(deleted.response.status, `${role} deletes the project`).toBe(said.delete ? 200 : 403);
    }
  });
});
