/**
 * If-Match on DELETE (issue 30: "If-Match on DELETE is ignored (a stale tag
 * deleted a project)"). RFC 9110 §13.1.1: when the condition is false, "the
 * server MUST NOT perform the requested method". For a project, a player and
 * a file, on both stores: a tag made stale by a change since is refused with
 * 412 and deletes nothing; the current tag, and `*`, delete; no header
 * deletes as before.
 */
import { describe, expect, it } from 'vitest';
import { backends } from '../testing/databases.ts';
import { json, useTestServer } from '../testing/harness.ts';

describe.each(backends)('If-Match on DELETE, on %s', (backend) => {
  const t = useTestServer(backend);

  /** The ETag a GET answers for `path`. */
  const etagOf = async (token: string, path: string) => {
    const read = await t.fetch(path, { token });
    expect(read.status, path).toBe(200);
    return read.headers.get('etag')!;
  };

  /** Deletes `path` with a stale tag (refused, nothing gone), then with the current one (gone). */
  async function deletesOnlyTheVersionRead(token: string, path: string, change: () => Promise<void>) {
    const stale = await etagOf(token, path);
    await change();
    const current = await etagOf(token, path);
    expect(current).not.toBe(stale);
    const refused = await t.fetch(path, { method: 'DELETE', token, headers: { 'If-Match': stale } });
    expect(refused.status).toBe(412);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await refused.json()).toMatchObject({ type: '/problems/precondition-failed', detail: expect.stringContaining(`now at ETag ${current}. Nothing was changed.`) });
    expect((await t.fetch(path, { token })).status, 'still there after the refusal').toBe(200);
    // A weak tag never matches (strong comparison), even of the current version.
    expect((await t.fetch(path, { method: 'DELETE', token, headers: { 'If-Match': `W/${current}` } })).status).toBe(412);
    const deleted = await t.fetch(path, { method: 'DELETE', token, headers: { 'If-Match': current } });
    expect(deleted.status, await deleted.clone().text()).toBe(200);
    expect((await t.fetch(path, { token })).status).toBe(404);
  }

  it('deletes a project only at the version read', async () => {
    const { api, token } = await t.as(`delete-project-${backend}@example.com`);
    const { data: project } = await api.POST('/projects', { body: { name: 'Keep me' } });
    const path = `/projects/${project!.id}`;
    await deletesOnlyTheVersionRead(token, path, async () => {
      expect((await t.fetch(path, { ...json({ name: 'Renamed meanwhile' }), token })).status).toBe(200);
    });
  });

  it('deletes a player only at the version read', async () => {
    const { api, token } = await t.as(`delete-player-${backend}@example.com`);
    const { data: player } = await api.POST('/players', { body: { name: 'Review link' } });
    const path = `/players/${player!.id}`;
    await deletesOnlyTheVersionRead(token, path, async () => {
      expect((await t.fetch(path, { ...json({ name: 'Renamed meanwhile' }), token })).status).toBe(200);
    });
  });

  it('deletes a file only at the version read', async () => {
    const { api, token } = await t.as(`delete-file-${backend}@example.com`);
    const { data: project } = await api.POST('/projects', { body: { name: 'Files' } });
    const { data: uploaded } = await api.uploadFile(project!.id, { name: 'take-1.txt', mimeType: 'text/plain' }, new TextEncoder().encode('take one'));
    const path = `/projects/${project!.id}/files/${uploaded!.box.id}`;
    await deletesOnlyTheVersionRead(token, path, async () => {
      expect((await t.fetch(path, { ...json({ name: 'take-1 (final).txt' }), token })).status).toBe(200);
    });
  });

  it('deletes with If-Match: * while the resource exists, and without the header as before', async () => {
    const { api, token } = await t.as(`delete-any-${backend}@example.com`);
    const { data: first } = await api.POST('/projects', { body: { name: 'Any version' } });
    expect((await t.fetch(`/projects/${first!.id}`, { method: 'DELETE', token, headers: { 'If-Match': '*' } })).status).toBe(200);
    // RFC 9110 §13.1.1: "*" is false when there is no current representation; here the project is not found at all.
    expect((await t.fetch(`/projects/${first!.id}`, { method: 'DELETE', token, headers: { 'If-Match': '*' } })).status).toBe(404);
    const { data: second } = await api.POST('/projects', { body: { name: 'No condition' } });
    expect((await t.fetch(`/projects/${second!.id}`, { method: 'DELETE', token })).status).toBe(200);
    // A malformed header is a 400 naming it, and deletes nothing.
    const { data: third } = await api.POST('/projects', { body: { name: 'Bad header' } });
    const bad = await t.fetch(`/projects/${third!.id}`, { method: 'DELETE', token, headers: { 'If-Match': '3' } });
    expect(bad.status).toBe(400);
    expect((await t.fetch(`/projects/${third!.id}`, { token })).status).toBe(200);
  });
});
