/**
 * The bench's `s3-upload` part. What it measures, and how, is its paragraph of bench/README.md's list of parts,
 * kept in s3-upload.md beside this file and written into the README by `npm run bench:readme`.
 */
import { Readable } from 'node:stream';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { uploadHeaders } from '../../generated/client.ts';
import { openRunS3 } from '../../server/testing/s3-run.ts';
import { seed } from '../lib/accounts.ts';
import { medianOf, ratio } from '../lib/figures.ts';
import { put } from '../lib/put.ts';
import { start } from '../lib/servers.ts';
import { uploadBytes } from '../lib/settings.ts';
import type { BenchPart, PartContext } from '../lib/part.ts';

async function run({ say, failures }: PartContext): Promise<void> {
  // --- a 1 GiB PUT through the API into S3, against the AWS SDK's own multipart upload of the same bytes ---
  // The server is on core 1 as for the upload part; this process (the client, and the SDK of the baseline) on core 0;
  // radosgw wherever the kernel puts it, for both alike.
  const s3 = await openRunS3();
  try {
    const bucket = await s3.bucket();
    const server = await start('server/main.ts', s3.env(bucket));
    const { api, projectid } = await seed(server);
    const s3Rounds = Number(process.env.BENCH_S3_ROUNDS ?? 1);
    const sdkRuns: number[] = [];
    const oursRuns: Array<{ mbps: number; rss: number }> = [];
    for (let round = 0; round < s3Rounds; round++) {
      // The baseline: @aws-sdk/lib-storage with its defaults, from a stream of the same 1 MiB chunks the PUT sends.
      const chunk = Buffer.alloc(1 << 20, 7);
      const body = Readable.from(
        (function* () {
          for (let sent = 0; sent < uploadBytes; sent += chunk.length) yield uploadBytes - sent >= chunk.length ? chunk : chunk.subarray(0, uploadBytes - sent);
        })(),
      );
      const key = `baseline-${round}`;
      const started = process.hrtime.bigint();
      await new Upload({ client: s3.client, params: { Bucket: bucket, Key: key, Body: body, ContentType: 'audio/wav' } }).done();
      sdkRuns.push(uploadBytes / 1e6 / (Number(process.hrtime.bigint() - started) / 1e9));
      await s3.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));

      const { data: upload } = await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: `big-${round}.wav`, mimeType: 'audio/wav', size: uploadBytes } });
      const ours = await put(upload!.url, uploadHeaders(upload!), server.child.pid!);
      if (ours.status !== 200) throw new Error(`upload to S3 answered ${ours.status}`);
      oursRuns.push({ mbps: uploadBytes / 1e6 / ours.seconds, rss: ours.rssGrowthMiB });
      await api.DELETE('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: upload!.boxid } } });
    }
    await server.stop();
    const sdk = medianOf(sdkRuns);
    const ours = medianOf(oursRuns.map((run) => run.mbps));
    const rss = Math.max(...oursRuns.map((run) => run.rss));
    say(`AWS SDK multipart upload (lib-storage defaults) to S3: ${sdk.toFixed(0)} MB/s (rounds: ${sdkRuns.map((run) => run.toFixed(0)).join(', ')})`);
    say(`server upload PUT into S3: ${ours.toFixed(0)} MB/s (${ratio(ours, sdk)}× the SDK), RSS growth ${rss.toFixed(1)} MiB (rounds: ${oursRuns.map((run) => run.mbps.toFixed(0)).join(', ')})`);
    if (ours / sdk < 0.7) failures.push(`s3-upload: ${ratio(ours, sdk)}× the SDK's multipart upload, below the 0.7× target`);
    if (rss >= 100) failures.push(`s3-upload: the server's RSS grew by ${rss.toFixed(1)} MiB, over the 100 MiB target`);
  } finally {
    await s3.close();
  }
}

export const part: BenchPart = {
  name: 's3-upload',
  title: 'S3 upload',
  summary: 'one 1 GiB PUT through the API into S3 (radosgw), against lib-storage\'s own multipart upload of the same bytes; plus the server\'s RSS growth.',
  readme: new URL('./s3-upload.md', import.meta.url),
  run,
};
