/** Waiting on a file's processing, for tests and the bench. */
import type { ApiClient, Schemas } from '../../generated/client.ts';

/** Polls the file until its status is one of `statuses`; fails after `timeoutMs`. */
export async function waitForStatus(
  api: ApiClient,
  projectid: string,
  boxid: string,
  statuses: Array<Schemas['FileBox']['status']> = ['ready', 'failed'],
  { timeoutMs = 60_000, intervalMs = 50 } = {},
): Promise<Schemas['FileBox']> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { data } = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: boxid } } });
    const file = data as Schemas['FileBox'];
    if (statuses.includes(file.status)) return file;
    if (Date.now() > deadline) throw new Error(`${boxid} is still ${file.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
