/**
 * The bench's `upload` part. What it measures, and how, is its paragraph of bench/README.md's list of parts,
 * kept in upload.md beside this file and written into the README by `npm run bench:readme`.
 */
import { uploadHeaders } from '../../generated/client.ts';
import { seed } from '../lib/accounts.ts';
import { ratio } from '../lib/figures.ts';
import { put } from '../lib/put.ts';
import { start } from '../lib/servers.ts';
import { rounds, uploadBytes } from '../lib/settings.ts';
import type { BenchPart, PartContext } from '../lib/part.ts';

async function run({ say }: PartContext): Promise<void> {
  // One upload's speed swings by ±30 % on this machine (page cache, the other core), so the rounds alternate the bare
  // server and ours, as the reads do, and each figure is the median.
  const bareServer = await start('bench/baselines/bare-upload.ts');
  const server = await start('server/main.ts');
  const { api, projectid } = await seed(server);
  const bare: Array<{ mbps: number; rss: number }> = [];
  const oursRuns: Array<{ mbps: number; rss: number }> = [];
  for (let round = 0; round < rounds; round++) {
    const baseline = await put(`${bareServer.url}/upload`, { 'Content-Type': 'audio/wav' }, bareServer.child.pid!);
    bare.push({ mbps: uploadBytes / 1e6 / baseline.seconds, rss: baseline.rssGrowthMiB });
    const { data: upload } = await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: `big-${round}.wav`, mimeType: 'audio/wav', size: uploadBytes } });
    const ours = await put(upload!.url, uploadHeaders(upload!), server.child.pid!);
    if (ours.status !== 200) throw new Error(`upload answered ${ours.status}`);
    oursRuns.push({ mbps: uploadBytes / 1e6 / ours.seconds, rss: ours.rssGrowthMiB });
    // The bare server removes each file once it has answered; so does this, so that neither round writes into a disk
    // still busy flushing the other's gigabytes.
    await api.DELETE('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: upload!.boxid } } });
  }
  await bareServer.stop();
  await server.stop();
  const middle = (runs: Array<{ mbps: number }>) => runs.map((run) => run.mbps).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  // Memory is reported at its worst, the first round's: later rounds reuse what the first one grew.
  const worst = (runs: Array<{ rss: number }>) => Math.max(...runs.map((run) => run.rss));
  const bareMBps = middle(bare);
  const oursMBps = middle(oursRuns);
  say(`bare node:http upload to disk: ${bareMBps.toFixed(0)} MB/s, RSS growth ${worst(bare).toFixed(1)} MiB (rounds: ${bare.map((run) => run.mbps.toFixed(0)).join(', ')})`);
  say(`server upload PUT: ${oursMBps.toFixed(0)} MB/s (${ratio(oursMBps, bareMBps)}× bare), RSS growth ${worst(oursRuns).toFixed(1)} MiB (rounds: ${oursRuns.map((run) => run.mbps.toFixed(0)).join(', ')})`);
}

export const part: BenchPart = {
  name: 'upload',
  title: 'Upload',
  summary: 'one 1 GiB PUT to a signed URL, against bare node:http writing the body to disk; plus the server\'s RSS growth during it.',
  readme: new URL('./upload.md', import.meta.url),
  run,
};
