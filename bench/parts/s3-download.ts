/**
 * The bench's `s3-download` part. What it measures, and how, is its paragraph of bench/README.md's list of parts,
 * kept in s3-download.md beside this file and written into the README by `npm run bench:readme`.
 */
import { createApiClient, uploadHeaders } from '../../generated/client.ts';
import { openRunS3 } from '../../server/testing/s3-run.ts';
import { benchToken } from '../lib/accounts.ts';
import { ratio } from '../lib/figures.ts';
import { cpuSeconds } from '../lib/proc.ts';
import { put } from '../lib/put.ts';
import { start } from '../lib/servers.ts';
import type { BenchPart, PartContext } from '../lib/part.ts';

async function run({ say, failures }: PartContext): Promise<void> {
  // --- the server's CPU per GiB downloaded: disk (the bytes pass through Node) against S3 (they come from the bucket) ---
  // Downloads through the URLs the API hands out, read whole by this process (core 0); the server's CPU time
  // (user + system, /proc/PID/stat) is read before and after, so what it spent answering the API call is counted too.
  const fileBytes = Number(process.env.BENCH_DOWNLOAD_BYTES ?? 256 * 1024 ** 2);
  const totalBytes = Number(process.env.BENCH_DOWNLOAD_TOTAL_BYTES ?? 1024 ** 3);
  const s3 = await openRunS3();
  try {
    const perGiB: Record<string, number> = {};
    for (const [name, env] of [
      ['disk', {}],
      ['S3', s3.env(await s3.bucket())],
    ] as Array<[string, Record<string, string>]>) {
      const server = await start('server/main.ts', env);
      const token = await benchToken(server);
      const api = createApiClient({ baseUrl: server.url + '/api/v1', token });
      const { data: project } = await api.POST('/projects', { body: { name: 'Downloads' } });
      const { data: upload } = await api.POST('/projects/{projectid}/files', { params: { path: { projectid: project!.id } }, body: { name: 'mix.bin', mimeType: 'application/octet-stream', size: fileBytes } });
      const stored = await put(upload!.url, uploadHeaders(upload!), server.child.pid!, fileBytes);
      if (stored.status !== 200) throw new Error(`upload answered ${stored.status}`);
      const before = cpuSeconds(server.child.pid!);
      let received = 0;
      while (received < totalBytes) {
        const { data } = await api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path: { projectid: project!.id, fileid: upload!.boxid } } });
        const answer = await fetch(data!.url);
        if (!answer.ok || !answer.body) throw new Error(`download answered ${answer.status}`);
        const reader = answer.body.getReader();
        for (let read = await reader.read(); !read.done; read = await reader.read()) received += read.value.length;
      }
      perGiB[name] = (cpuSeconds(server.child.pid!) - before) / (received / 1024 ** 3);
      await server.stop();
    }
    say(`server CPU per GiB downloaded: disk ${perGiB.disk.toFixed(2)} s, S3 ${perGiB.S3.toFixed(3)} s (${ratio(perGiB.S3, perGiB.disk)}× disk), ${fileBytes / 1024 ** 2} MiB files through the API's download URLs`);
    // What is left on S3 is the API calls and what the process does anyway while the bytes flow (timers, the log).
    if (perGiB.S3 > 0.25 * perGiB.disk) failures.push(`s3-download: on S3 the server spends ${ratio(perGiB.S3, perGiB.disk)}× the CPU per GiB it spends on disk; the bytes should not pass through it`);
  } finally {
    await s3.close();
  }
}

export const part: BenchPart = {
  name: 's3-download',
  title: 'S3 download',
  summary: 'the server\'s CPU per GiB downloaded through the API\'s URLs, on disk against S3 (where the bytes skip the server).',
  readme: new URL('./s3-download.md', import.meta.url),
  run,
};
