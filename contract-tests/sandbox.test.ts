import { describe, expect, it } from 'vitest';
import { client, onMock, raw, target } from './support/context.ts';

const api = client();
const onSandbox = target === 'sandbox';

describe('sandbox', () => {
  it('resetSandbox refuses a request without a bearer token', async () => {
    const response = await raw('/sandbox/reset', { method: 'POST', token: null });
    expect(response.status).toBe(401);
  });

  it.runIf(onMock || onSandbox)('resetSandbox answers the ids of the demo state', async () => {
    const { data, response } = await api.POST('/sandbox/reset');
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ object: 'sandbox', projectid: expect.any(String) });
  });

  it.runIf(onSandbox)('on the sandbox, the account holds the demo project after a reset, and what was made before it is gone (read after write)', { timeout: 120_000 }, async () => {
    const { data: made } = await api.POST('/projects', { body: { name: 'Contract: made in the sandbox' } });
    expect((await api.GET('/projects/{projectid}', { params: { path: { projectid: made!.id } } })).data?.name).toBe('Contract: made in the sandbox');
    const { data: state } = await api.POST('/sandbox/reset');
    const { data: projects } = await api.GET('/projects');
    expect(projects!.map((project) => project.id)).toEqual([state!.projectid]);
    const { data: boxes } = await api.GET('/projects/{projectid}/all', { params: { path: { projectid: state!.projectid } } });
    expect(boxes!.filter((box) => box.object === 'file').every((box) => (box as { status?: string }).status === 'ready')).toBe(true);
  });

  it.runIf(!onMock && !onSandbox)('resetSandbox answers 404 on a server that is not a sandbox', async () => {
    const response = await raw('/sandbox/reset', { method: 'POST' });
    expect(response.status).toBe(404);
  });
});
