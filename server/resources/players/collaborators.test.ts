/**
 * Inviting a collaborator to a player that exists (inviteCollaborator), on
 * both stores: someone new gets a link of their own and the project's role
 * once verified; inviting them again changes the role and keeps the link;
 * no one grants a role above their own (an editor invites no admin); a
 * player holds at most 100 collaborators; a stranger finds no player.
 */
import { describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';

describe.each(backends)('inviting a collaborator to an existing player, on %s', (backend) => {
  const t = useTestServer(backend);

  it('invites someone new with a link, changes their role keeping it, and the role reaches the project', async () => {
    const owner = await t.as(`owner-${backend}@example.com`);
    const { data: player } = await owner.api.POST('/players', { body: { name: 'Mixes', public: false } });
    const playerid = player!.id;
    const email = `Mixer-${backend}@Example.com`;
    const invited = await owner.api.PUT('/players/{playerid}/collaborators/{email}', { params: { path: { playerid, email } }, body: { role: 'viewer' } });
    expect(invited.response.status).toBe(200);
    // Addresses compare case-insensitively: the stored one is lower case.
    expect(invited.data).toMatchObject({ email: email.toLowerCase(), role: 'viewer', inviteUsed: false });
    const version = (await owner.api.GET('/players/{playerid}', { params: { path: { playerid } } })).response.headers.get('ETag');

    const again = await owner.api.PUT('/players/{playerid}/collaborators/{email}', { params: { path: { playerid, email: email.toLowerCase() } }, body: { role: 'editor' } });
    expect(again.data).toMatchObject({ role: 'editor', inviteUrl: invited.data!.inviteUrl });
    // A change of the player: its version moves on.
    expect((await owner.api.GET('/players/{playerid}', { params: { path: { playerid } } })).response.headers.get('ETag')).not.toBe(version);
    expect((await owner.api.GET('/players/{playerid}/collaborators', { params: { path: { playerid } } })).data!.map(({ email, role }) => ({ email, role }))).toEqual([{ email: email.toLowerCase(), role: 'editor' }]);

    // The invited address's account (verified, as the test harness makes them) holds the role on the project.
    const mixer = await t.as(email.toLowerCase());
    expect((await mixer.api.GET('/projects')).data!.find((project) => project.id === player!.projectid)).toMatchObject({ role: 'editor' });
  });

  it('lets an editor invite editors and viewers but not an admin (403), and a stranger finds no player (404)', async () => {
    const owner = await t.as(`lead-${backend}@example.com`);
    const editorEmail = `editor-${backend}@example.com`;
    const { data: player } = await owner.api.POST('/players', { body: { name: 'Team', public: false, collaborators: [{ email: editorEmail, role: 'editor' }] } });
    const playerid = player!.id;
    const editor = await t.as(editorEmail);
    const asEditor = (email: string, role: 'admin' | 'editor' | 'viewer') => editor.api.PUT('/players/{playerid}/collaborators/{email}', { params: { path: { playerid, email } }, body: { role } });

    expect((await asEditor(`second-${backend}@example.com`, 'editor')).response.status).toBe(200);
    const refused = await asEditor(`boss-${backend}@example.com`, 'admin');
    expect(refused.response.status).toBe(403);
    expect(refused.error?.detail).toContain('editor or below');
    // The editor cannot raise themselves either.
    expect((await asEditor(editorEmail, 'admin')).response.status).toBe(403);
    expect((await owner.api.GET('/players/{playerid}/collaborators', { params: { path: { playerid } } })).data!.map(({ role }) => role)).toEqual(['editor', 'editor']);
    // Nor through a new link of the project: createPlayer's collaborators follow the same rule.
    const viaNewLink = await editor.api.POST('/players', { body: { name: 'Side door', projectid: player!.projectid, collaborators: [{ email: `boss-${backend}@example.com`, role: 'admin' }] } });
    expect(viaNewLink.response.status).toBe(403);
    expect(viaNewLink.error?.detail).toContain('not as admin');
    const asEditorMay = await editor.api.POST('/players', { body: { name: 'Front door', projectid: player!.projectid, collaborators: [{ email: `third-${backend}@example.com`, role: 'editor' }] } });
    expect(asEditorMay.response.status).toBe(200);
    expect((await owner.api.GET('/players')).data!.map((link) => link.name)).toEqual(expect.arrayContaining(['Front door']));
    expect((await owner.api.GET('/players')).data!.map((link) => link.name)).not.toContain('Side door');

    const stranger = await t.as(`stranger-${backend}@example.com`);
    expect((await stranger.api.PUT('/players/{playerid}/collaborators/{email}', { params: { path: { playerid, email: 'x@example.com' } }, body: { role: 'viewer' } })).response.status).toBe(404);
  });

  it('holds at most 100 collaborators: the 101st is a 409 that says so, and changing a role still works when full', async () => {
    const owner = await t.as(`crowd-${backend}@example.com`);
    const collaborators = Array.from({ length: 100 }, (_, i) => ({ email: `guest${i}-${backend}@example.com`, role: 'viewer' as const }));
    const { data: player } = await owner.api.POST('/players', { body: { name: 'Crowd', public: false, collaborators } });
    const playerid = player!.id;
    const full = await owner.api.PUT('/players/{playerid}/collaborators/{email}', { params: { path: { playerid, email: `late-${backend}@example.com` } }, body: { role: 'viewer' } });
    expect(full.response.status).toBe(409);
    expect(full.error?.detail).toContain('Remove one first');
    expect((await owner.api.PUT('/players/{playerid}/collaborators/{email}', { params: { path: { playerid, email: collaborators[0].email } }, body: { role: 'editor' } })).response.status).toBe(200);
    expect((await owner.api.GET('/players/{playerid}/collaborators', { params: { path: { playerid } } })).data!.length).toBe(100);
  });
});
