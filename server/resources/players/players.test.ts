import { describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { json, useTestServer } from '../../testing/harness.ts';

describe.each(backends)('players on %s', (backend) => {
  const t = useTestServer(backend);

  it('creates a new project when no projectid is given, and the player covers all of it', async () => {
    const { api } = await t.as('owner@example.com');
    const { data: player } = await api.POST('/players', { body: { name: 'Single', sortBy: { criterion: 'name', ascending: false } } });
    expect(player).not.toHaveProperty('folderid');
    expect(player).not.toHaveProperty('boxids');
    const { data: project } = await api.GET('/projects/{projectid}', { params: { path: { projectid: player!.projectid } } });
    expect(project).toMatchObject({ name: 'Single', role: 'owner', sortBy: { criterion: 'name', ascending: false } });
  });

  it("refuses an upload portal redirect that is not an http or https URL (a javascript: URI would run on the portal's origin), and keeps one that is", async () => {
    const { api } = await t.as('portal@example.com');
    for (const redirect of ['javascript:alert(document.domain)', 'JavaScript:alert(1)', 'data:text/html,<script>alert(1)</script>', 'file:///etc/passwd', 'vbscript:msgbox(1)']) {
      const { error, response } = await api.POST('/players', { body: { name: 'Portal', upload: { enabled: true, redirect } } });
      expect(response.status, redirect).toBe(400);
      expect(error).toMatchObject({ type: '/problems/validation-error', errors: [{ pointer: '#/upload/redirect' }] });
    }
    expect((await api.GET('/players')).data).toHaveLength(0);
    const { data } = await api.POST('/players', { body: { name: 'Portal', upload: { enabled: true, redirect: 'https://www.example.com/thanks' } } });
    expect(data!.upload).toMatchObject({ redirect: 'https://www.example.com/thanks' });
  });

  it('applies the final defaults, and leaves quality, targetLufs and loudnessPlatform absent', async () => {
    const { api } = await t.as('defaults@example.com');
    const { data } = await api.POST('/players', { body: { name: 'Defaults' } });
    expect(data!.public).toBe(true);
    expect(data!.options).toEqual({
      metadata: false, isrc: false, downloads: true, comments: true, loudnessMatch: false,
      studio: false, stacks: false, serviceCTA: true, boxSubtitle: 'artist',
    });
    expect(data!.playerUrl).toBe(`${t.server.ctx.config.publicUrl}/p/${data!.id}`);
  });

  it('falls back from the request, to the stored preferences, to the final defaults', async () => {
    const { api } = await t.as('prefs@example.com');
    await api.POST('/me/preferences', { body: { public: false, options: { downloads: false, comments: false, quality: 'lossless', boxSubtitle: 'none' } } });
    const { data } = await api.POST('/players', { body: { name: 'Fallbacks', options: { comments: true, loudnessPlatform: 'tidal' } } });
    expect(data!.public).toBe(false);
    expect(data!.options).toMatchObject({ comments: true, loudnessPlatform: 'tidal', downloads: false, quality: 'lossless', boxSubtitle: 'none', serviceCTA: true });
    // Clearing a preference brings the final default back.
    await api.POST('/me/preferences', { body: { public: null, options: { downloads: null } } });
    const { data: later } = await api.POST('/players', { body: { name: 'Later' } });
    expect(later!.public).toBe(true);
    expect(later!.options.downloads).toBe(true);
    expect(later!.options.quality).toBe('lossless');
  });

  it('scopes a player to a folder or to boxes of the project', async () => {
    const { api } = await t.as('scope@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Scoped' } });
    const projectid = project!.id;
    const { data: folder } = await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'F' } });
    const byFolder = await api.POST('/players', { body: { name: 'Folder', projectid, folderid: folder!.id } });
    expect(byFolder.data).toMatchObject({ projectid, folderid: folder!.id });
    expect(byFolder.data).not.toHaveProperty('boxids');
    const byBoxes = await api.POST('/players', { body: { name: 'Boxes', projectid, boxids: [folder!.id] } });
    expect(byBoxes.data).toMatchObject({ projectid, boxids: [folder!.id] });
    expect(byBoxes.data).not.toHaveProperty('folderid');
  });

  it('refuses folderid or boxids without projectid, both together, and ids that are not of the project', async () => {
    const { api, token } = await t.as('rules@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Rules' } });
    const { data: other } = await api.POST('/projects', { body: { name: 'Other' } });
    const { data: otherFolder } = await api.POST('/projects/{projectid}/folders', { params: { path: { projectid: other!.id } }, body: { name: 'F' } });
    const cases: Array<[object, number, RegExp]> = [
      [{ name: 'x', folderid: 'box_1' }, 400, /folderid needs projectid/],
      [{ name: 'x', boxids: ['box_1'] }, 400, /boxids needs projectid/],
      [{ name: 'x', projectid: project!.id, folderid: 'box_1', boxids: ['box_2'] }, 400, /not both/],
      [{ name: 'x', projectid: project!.id, folderid: otherFolder!.id }, 409, /not a folder of project/],
      [{ name: 'x', projectid: project!.id, boxids: [otherFolder!.id] }, 409, /not a box of project/],
    ];
    for (const [body, status, detail] of cases) {
      const response = await t.fetch('/players', { ...json(body), token });
      expect(response.status, JSON.stringify(body)).toBe(status);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect((await response.json()).detail).toMatch(detail);
    }
    expect((await api.GET('/players')).data).toEqual([]);
  });

  it('updates only the fields given, and refuses boxSubtitle on update', async () => {
    const { api, token } = await t.as('update@example.com');
    const { data: created } = await api.POST('/players', { body: { name: 'Before', public: true, options: { comments: false, targetLufs: -16 } } });
    t.server.clock.advance(1000);
    const { data: updated } = await api.POST('/players/{playerid}', { params: { path: { playerid: created!.id } }, body: { name: 'After', options: { downloads: false } } });
    expect(updated).toMatchObject({ name: 'After', public: true, options: { comments: false, downloads: false, targetLufs: -16 } });
    expect(updated!.timeModified).toBeGreaterThan(created!.timeModified);
    expect(updated!.timeCreated).toBe(created!.timeCreated);
    const refused = await t.fetch(`/players/${created!.id}`, { ...json({ options: { boxSubtitle: 'none' } }), token });
    expect(refused.status).toBe(400);
    expect((await refused.json()).errors).toEqual([{ pointer: '#/options/boxSubtitle', detail: expect.stringMatching(/not a field/) }]);
  });

  it('lists exactly the players the caller owns, newest first', async () => {
    const alice = await t.as('alice@example.com');
    const bob = await t.as('bob@example.com');
    const first = (await alice.api.POST('/players', { body: { name: 'A1' } })).data!;
    t.server.clock.advance(10);
    const second = (await alice.api.POST('/players', { body: { name: 'A2', collaborators: [{ email: 'bob@example.com', role: 'admin' }] } })).data!;
    await bob.api.POST('/players', { body: { name: 'B1' } });
    expect((await alice.api.GET('/players')).data!.map((p) => p.id)).toEqual([second.id, first.id]);
    // Bob can read Alice's player as a collaborator, but does not own it.
    expect((await bob.api.GET('/players')).data!.map((p) => p.name)).toEqual(['B1']);
    expect((await bob.api.GET('/players/{playerid}', { params: { path: { playerid: second.id } } })).response.status).toBe(200);
  });

  it('refuses an expiry beyond the largest timestamp (400 naming the field, never a 500 from the store), and keeps the largest', async () => {
    const { api, token } = await t.as('expiry@example.com');
    const { data: player } = await api.POST('/players', { body: { name: 'Expiring' } });
    const largest = 9007199254740991;
    const tooLate = { type: '/problems/validation-error', errors: expect.arrayContaining([{ pointer: '#/expires', detail: `must be <= ${largest}` }]) };
    for (const expires of [1e308, largest + 1, 1e19]) {
      const created = await t.fetch('/players', { ...json({ name: 'Too late', expires }), token });
      expect(created.status, `create ${expires}`).toBe(400);
      expect(created.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await created.json()).toMatchObject(tooLate);
      const updated = await t.fetch(`/players/${player!.id}`, { ...json({ expires }), token });
      expect(updated.status, `update ${expires}`).toBe(400);
      expect(await updated.json()).toMatchObject(tooLate);
    }
    expect((await api.GET('/players')).data!.map((p) => p.name)).toEqual(['Expiring']);
    // The bound itself is a time both stores hold, and the player still opens.
    const { data: kept, response } = await api.POST('/players/{playerid}', { params: { path: { playerid: player!.id } }, body: { expires: largest } });
    expect(response.status).toBe(200);
    expect(kept!.expires).toBe(largest);
    expect((await api.GET('/players/{playerid}', { params: { path: { playerid: player!.id } } })).data!.expires).toBe(largest);
    expect((await t.fetch(`/players/${player!.id}/view`)).status).toBe(200);
  });

  it('refuses a paywall until a payment provider is connected, then stores it', async () => {
    const { api } = await t.as('seller@example.com');
    const payment = { price: 1999, fulfillment: 'allow-access', recipient: 'everyone' } as const;
    const refused = await api.POST('/players', { body: { name: 'Paid', payment } });
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ type: '/problems/payment-provider-required' });
    const { data: free } = await api.POST('/players', { body: { name: 'Free' } });
    expect((await api.POST('/players/{playerid}', { params: { path: { playerid: free!.id } }, body: { payment } })).response.status).toBe(409);
    await api.POST('/me/payment-provider', { body: { provider: 'stripe', accountId: 'acct_Seller000001' } });
    const { data: paid } = await api.POST('/players', { body: { name: 'Paid', payment } });
    expect(paid!.payment).toEqual(payment);
    const { data: read } = await api.GET('/players/{playerid}', { params: { path: { playerid: paid!.id } } });
    expect(read!.payment).toEqual(payment);
  });

  it("lets only the project's owner set, change or remove a paywall (403 for an editor, connected or not), and lists every player of the owner's projects as theirs", async () => {
    const owner = await t.as('label@example.com');
    const editor = await t.as('hired.editor@example.com');
    const payment = { price: 999, fulfillment: 'allow-download', recipient: 'customer' } as const;
    await owner.api.POST('/me/payment-provider', { body: { provider: 'stripe', accountId: 'acct_LabelOwner001' } });
    await editor.api.POST('/me/payment-provider', { body: { provider: 'stripe', accountId: 'acct_HiredEditor01' } });
    const { data: shared } = await owner.api.POST('/players', { body: { name: 'Review', collaborators: [{ email: 'hired.editor@example.com', role: 'editor' }] } });
    const projectid = shared!.projectid;

    // The editor may make players in the project, not sell it.
    const sold = await editor.api.POST('/players', { body: { name: 'Sold by the editor', projectid, public: true, payment } });
    expect(sold.response.status).toBe(403);
    expect(sold.response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(sold.error).toMatchObject({ type: '/problems/forbidden', detail: expect.stringContaining(`Only the owner of project ${projectid} may set, change or remove a player's payment`) });
    t.server.clock.advance(10);
    const { data: made, response } = await editor.api.POST('/players', { body: { name: 'Made by the editor', projectid, public: true } });
    expect(response.status).toBe(200);
    const playerid = made!.id;
    for (const change of [payment, null]) {
      const refused = await editor.api.POST('/players/{playerid}', { params: { path: { playerid } }, body: { payment: change } });
      expect(refused.response.status, JSON.stringify(change)).toBe(403);
      expect(refused.error).toMatchObject({ type: '/problems/forbidden', detail: expect.stringContaining('checkouts pay the owner') });
    }
    // Everything else stays theirs to change.
    expect((await editor.api.POST('/players/{playerid}', { params: { path: { playerid } }, body: { name: 'Renamed by the editor' } })).response.status).toBe(200);

    // The player is the owner's: listed as theirs, not the editor's.
    expect((await owner.api.GET('/players')).data!.map((player) => player.id)).toEqual([playerid, shared!.id]);
    expect((await editor.api.GET('/players')).data!.map((player) => player.id)).not.toContain(playerid);
    expect((await t.server.ctx.store.players.get(playerid))!.createdBy).toBe((await t.server.ctx.store.users.findByEmail('hired.editor@example.com'))!.id);

    // The owner sets the paywall, changes it, and removes it with null.
    const set = await owner.api.POST('/players/{playerid}', { params: { path: { playerid } }, body: { payment } });
    expect(set.response.status).toBe(200);
    expect(set.data!.payment).toEqual(payment);
    const changed = await owner.api.POST('/players/{playerid}', { params: { path: { playerid } }, body: { payment: { ...payment, price: 1299 } } });
    expect(changed.data!.payment).toEqual({ ...payment, price: 1299 });
    const removed = await owner.api.POST('/players/{playerid}', { params: { path: { playerid } }, body: { payment: null } });
    expect(removed.response.status).toBe(200);
    expect(removed.data).not.toHaveProperty('payment');
    expect((await owner.api.GET('/players/{playerid}', { params: { path: { playerid } } })).data).not.toHaveProperty('payment');
    expect((await t.fetch(`/players/${playerid}/view`).then((r) => r.json())) as object).not.toHaveProperty('paywall');

    // Once the editor is removed, the player stays the owner's, and the editor sees none of it.
    expect((await t.fetch(`/players/${shared!.id}/collaborators/hired.editor%40example.com`, { method: 'DELETE', token: owner.token })).status).toBe(200);
    expect((await owner.api.GET('/players')).data!.map((player) => player.id)).toEqual([playerid, shared!.id]);
    expect((await editor.api.GET('/players')).data!.map((player) => player.id)).toEqual([]);
    expect((await editor.api.GET('/players/{playerid}', { params: { path: { playerid } } })).response.status).toBe(404);
  });

  it('gives collaborators access by role, now or when they sign up later, and hides the player from everyone else', async () => {
    const owner = await t.as('band@example.com');
    const { data: player } = await owner.api.POST('/players', {
      body: {
        name: 'Shared',
        public: false,
        collaborators: [
          { email: 'Editor@Example.com', role: 'editor' },
          { email: 'late-viewer@example.com', role: 'viewer' },
        ],
      },
    });
    expect(player!.collaborators).toEqual([
      { email: 'editor@example.com', role: 'editor' },
      { email: 'late-viewer@example.com', role: 'viewer' },
    ]);
    const playerid = player!.id;
    const editor = await t.as('editor@example.com');
    expect((await editor.api.POST('/players/{playerid}', { params: { path: { playerid } }, body: { name: 'Renamed by editor' } })).response.status).toBe(200);
    // The viewer signs up after the invitation.
    const viewer = await t.as('late-viewer@example.com');
    expect((await viewer.api.GET('/players/{playerid}', { params: { path: { playerid } } })).data!.name).toBe('Renamed by editor');
    const viewerWrite = await viewer.api.POST('/players/{playerid}', { params: { path: { playerid } }, body: { name: 'Nope' } });
    expect(viewerWrite.response.status).toBe(403);
    const stranger = await t.as('stranger@example.com');
    const hidden = await stranger.api.GET('/players/{playerid}', { params: { path: { playerid } } });
    const missing = await stranger.api.GET('/players/{playerid}', { params: { path: { playerid: 'ply_doesnotexist00' } } });
    expect(hidden.response.status).toBe(404);
    expect(missing.response.status).toBe(404);
    // The two 404s say the same, so the player's existence does not leak.
    expect(hidden.error!.detail.replace(playerid, 'ID')).toBe(missing.error!.detail.replace('ply_doesnotexist00', 'ID'));
    expect((await stranger.api.POST('/players', { body: { name: 'x', projectid: player!.projectid } })).response.status).toBe(404);
  });
});
