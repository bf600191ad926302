/**
 * The bench's parts, in the order a run takes them (`npm run bench` runs them all; `npm run bench -- view bundle` the
 * parts named). bench/README.md's list of parts is made from this list by `npm run bench:readme`.
 */
import type { BenchPart } from '../lib/part.ts';
import { part as reads } from './reads.ts';
import { part as accounts } from './accounts.ts';
import { part as stages } from './stages.ts';
import { part as idempotency } from './idempotency.ts';
import { part as upload } from './upload.ts';
import { part as s3Upload } from './s3-upload.ts';
import { part as s3Download } from './s3-download.ts';
import { part as clusterReads } from './cluster-reads.ts';
import { part as audio } from './audio.ts';
import { part as latency } from './latency.ts';
import { part as view } from './view.ts';
import { part as bundle } from './bundle.ts';
import { part as play } from './play.ts';
import { part as webhooks } from './webhooks.ts';
import { part as listings } from './listings.ts';
import { part as studio } from './studio.ts';
import { part as allAfterWrite } from './all-after-write.ts';

export const parts: readonly BenchPart[] = [
  reads,
  accounts,
  stages,
  idempotency,
  upload,
  s3Upload,
  s3Download,
  clusterReads,
  audio,
  latency,
  view,
  bundle,
  play,
  webhooks,
  listings,
  studio,
  allAfterWrite,
];
