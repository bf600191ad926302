/**
 * Blobs as objects in an S3-compatible bucket (AWS S3, Cloudflare R2,
 * Backblaze B2, MinIO, Ceph's radosgw; Google Cloud Storage through its XML
 * API), behind the same interface and conformance suite as local disk.
 *
 * A write is a multipart upload, begun before the first byte is read and
 * completed only after the last one is stored and `beforeCommit` has agreed:
 * S3 makes the object appear at CompleteMultipartUpload, whole, replacing an
 * existing one atomically, so a blob is whole or absent. Any failure aborts
 * the upload, which discards its parts. Memory stays bounded: the body is cut
 * into parts of `partSize` bytes, and at most `partsInFlight` are sent at once
 * while the next one fills (reading waits meanwhile, so TCP slows the client).
 *
 * A process that dies mid-write leaves its multipart upload behind, unseen by
 * reads and listings, still costing storage. sweepUnfinishedWrites aborts
 * those idle for long enough, judged by S3's own stamps (when the upload was
 * begun, when each part arrived) against S3's own clock (the Date header of
 * its answer). A write receiving bytes too slowly to fill a part before the
 * sweep would judge it idle shows it is alive: every `keepAliveMs` in which
 * bytes arrived, it stores an empty placeholder for the part it is filling,
 * which the real part later replaces. A stalled write sends none, and is swept.
 *
 * The traps of the AWS SDK v3 are avoided here once, in createS3Client: it
 * adds CRC32 checksums to every request by default (since 3.729), which some
 * S3-compatible stores refuse; checksums are sent only where S3 requires them.
 */
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { BlobStoreUnavailableError, type BlobInfo, type BlobStore, type PresignedGetOptions, type WriteOptions } from './blob-store.ts';
import { checkedBytes, checkKey, checkPrefix } from './byte-checks.ts';

/** Where and how to reach the bucket. */
export interface S3Settings {
  /** The S3 API's URL, such as http://127.0.0.1:7480; undefined for AWS S3 itself (from the region). */
  endpoint: string | undefined;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Bucket in the path (endpoint/bucket/key) rather than in the host name (bucket.endpoint/key). */
  forcePathStyle: boolean;
}

export function createS3Client(settings: Omit<S3Settings, 'bucket'>): S3Client {
  return new S3Client({
    endpoint: settings.endpoint,
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
    // Since 3.729 the SDK adds a CRC32 to every upload ('WHEN_SUPPORTED'), and bakes the CRC of an empty
    // body into presigned PUT URLs, which real S3, R2 and MinIO then refuse; not every S3-compatible store
    // knows these headers. Checksums only where the operation requires one.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // An endpoint that does not answer must fail the start (HeadBucket) in seconds, not hang it.
    requestHandler: { connectionTimeout: 10_000 },
  });
}

export interface S3BlobStoreOptions {
  client: S3Client;
  bucket: string;
  /** What the bucket is called in messages, such as "s3://audio at http://127.0.0.1:7480". */
  description?: string;
  /** Where localFile puts its copies; the system's temporary folder unless given. */
  scratchDir?: string;
  /** Bytes per part of a write; S3 takes 5 MiB at least (but for the last part). Raised if 10,000 parts would not hold the blob. */
  partSize?: number;
  /** Parts of one write sent at once, while the next fills. */
  partsInFlight?: number;
  /** How often a write that receives bytes but fills no part shows S3 it is alive; well under the sweep's idle time. */
  keepAliveMs?: number;
}

const MIB = 1024 * 1024;
/** How the folders of localFile's copies start, followed by the pid of the process that made them. */
export const COPY_PREFIX = 'blob-copy-';
/** S3's smallest part (all but the last), and its largest number of parts. */
const MIN_PART_SIZE = 5 * MIB;
const MAX_PARTS = 10_000;

export class S3BlobStore implements BlobStore {
  readonly client: S3Client;
  readonly bucket: string;
  private readonly description: string;
  private readonly scratchDir: string;
  private readonly partSize: number;
  private readonly partsInFlight: number;
  private readonly keepAliveMs: number;

  constructor(options: S3BlobStoreOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
    this.description = options.description ?? `bucket ${options.bucket}`;
    this.scratchDir = options.scratchDir ?? tmpdir();
    this.partSize = Math.max(MIN_PART_SIZE, options.partSize ?? 8 * MIB);
    this.partsInFlight = Math.max(1, options.partsInFlight ?? 2);
    this.keepAliveMs = options.keepAliveMs ?? 20_000;
  }

  /** Fails with a BlobStoreUnavailableError that says why, unless the bucket answers HeadBucket with these keys. */
  async check(timeoutMs = 20_000): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), { abortSignal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      const status = (error as S3ServiceException).$metadata?.httpStatusCode;
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).name;
      const why =
        status === 404
          ? 'the bucket does not exist: create it, or set S3_BUCKET to one that does'
          : status === 403
            ? 'access denied: check S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, and that these keys may use this bucket'
            : status === 301 || status === 400
              ? `the store answered ${status}: check S3_REGION, and S3_FORCE_PATH_STYLE`
              : status
                ? `the store answered ${status} ${(error as Error).name}`
                : `nothing usable answers there (${code}${(error as Error).message ? `: ${(error as Error).message}` : ''}): check S3_ENDPOINT`;
      throw new BlobStoreUnavailableError(`Cannot use the S3 ${this.description}: ${why}.`, { cause: error });
    }
  }

  async write(key: string, source: Readable, { expectedSize, inspectHead, onProgress, signal, beforeCommit }: WriteOptions): Promise<BlobInfo> {
    const Key = checkKey(key);
    signal?.throwIfAborted();
    // Cancels the requests under way when the write fails, for any reason.
    const cancel = new AbortController();
    const abortSignal = signal ? AbortSignal.any([signal, cancel.signal]) : cancel.signal;
    const { UploadId } = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key }), { abortSignal });
    const parts = new PartUploader(this.client, { Bucket: this.bucket, Key, UploadId: UploadId! }, abortSignal, this.partsInFlight);
    // 10,000 parts must hold the declared size.
    const partSize = Math.max(this.partSize, Math.ceil(expectedSize / (MAX_PARTS - 1)));
    const counter = checkedBytes({ expectedSize, inspectHead, onProgress });
    let freshBytes = false;
    const keepAlive = setInterval(() => {
      // Alive: bytes arrived since the last look, or parts are on their way to S3 (whose LastModified comes when they land).
      if (freshBytes || parts.sending) parts.keepAlive();
      freshBytes = false;
    }, this.keepAliveMs);
    try {
      await pipeline(
        source,
        counter,
        async (chunks: AsyncIterable<Buffer>) => {
          const filling: Buffer[] = [];
          let filled = 0;
          for await (const chunk of chunks) {
            filling.push(chunk);
            filled += chunk.length;
            freshBytes = true;
            // Cut whole parts while more than one is buffered, so that the last part (sent at the end) is never empty, unless the blob is.
            while (filled > partSize) {
              const joined = Buffer.concat(filling);
              filling.length = 0;
              filling.push(joined.subarray(partSize));
              filled = joined.length - partSize;
              await parts.send(joined.subarray(0, partSize));
            }
          }
          clearInterval(keepAlive);
          await parts.send(Buffer.concat(filling));
          await parts.finished();
        },
        { signal },
      );
      await beforeCommit?.();
      signal?.throwIfAborted();
      // The point of no return, as the rename is on disk: not cancelled by the signal, for S3 may complete it
      // even if the request were cut, and the write must not then say it kept nothing.
      await this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId, MultipartUpload: { Parts: parts.completed() } }));
      return { size: counter.received };
    } catch (error) {
      cancel.abort();
      // Discards the parts stored so far. Should that fail too, the sweep aborts the upload later.
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId })).catch(() => {});
      // pipeline rejects with an AbortError of its own; the caller gave the reason it wants to see.
      if (signal?.aborted) throw signal.reason;
      throw error;
    } finally {
      clearInterval(keepAlive);
    }
  }

  async adopt(key: string, path: string): Promise<BlobInfo> {
    const Key = checkKey(key);
    const { size } = await stat(path);
    // lib-storage sends a file that fits one part as one PutObject (one request, not three), and a larger one
    // as a multipart upload it aborts should a part fail. Either way the object appears whole or not at all.
    await new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key, Body: createReadStream(path, { highWaterMark: MIB }), ContentLength: size },
      partSize: Math.max(this.partSize, Math.ceil(size / (MAX_PARTS - 1))),
      queueSize: this.partsInFlight,
      leavePartsOnError: false,
    }).done();
    await rm(path, { force: true });
    return { size };
  }

  async stat(key: string): Promise<BlobInfo | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: checkKey(key) }));
      return { size: head.ContentLength ?? 0 };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  read(key: string, range?: { start: number; end: number }): Readable {
    const Key = checkKey(key);
    const out = new PassThrough({ highWaterMark: MIB });
    const cancel = new AbortController();
    // A reader that stops early (a client that went away) ends the GET too.
    out.once('close', () => {
      if (!out.readableEnded) cancel.abort();
    });
    const Range = range ? `bytes=${range.start}-${range.end}` : undefined;
    this.client
      .send(new GetObjectCommand({ Bucket: this.bucket, Key, Range }), { abortSignal: cancel.signal })
      .then((object) => pipeline(object.Body as Readable, out))
      .catch((error: unknown) => out.destroy(isNotFound(error) ? noBlob(key, error) : (error as Error)));
    return out;
  }

  async delete(key: string): Promise<void> {
    // S3 answers 204 for a key that is not there, too.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: checkKey(key) }));
  }

  async localFile(key: string): Promise<{ path: string; release(): Promise<void> }> {
    const Key = checkKey(key);
    await mkdir(this.scratchDir, { recursive: true, mode: 0o700 });
    await this.removeCopiesOfDeadProcesses();
    // Named by this process, so that a later call can tell a copy a crashed process left behind.
    const folder = await mkdtemp(join(this.scratchDir, `${COPY_PREFIX}${process.pid}-`));
    const release = () => rm(folder, { recursive: true, force: true });
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key }));
      const path = join(folder, 'blob');
      // Readable by the server's user alone, as blobs on disk are.
      await pipeline(object.Body as Readable, createWriteStream(path, { mode: 0o600, highWaterMark: MIB }));
      return { path, release };
    } catch (error) {
      await release();
      throw isNotFound(error) ? noBlob(key, error) : error;
    }
  }

  /**
   * Copies are released when their user is done, but a process killed
   * meanwhile leaves its copy; the next copy made on this machine removes
   * it. Workers run where the copies are, which the upload sweep may not.
   */
  private async removeCopiesOfDeadProcesses(): Promise<void> {
    for (const name of await readdir(this.scratchDir)) {
      const pid = Number(new RegExp(`^${COPY_PREFIX}(\\d+)-`).exec(name)?.[1]);
      if (!pid || pid === process.pid || isRunning(pid)) continue;
      await rm(join(this.scratchDir, name), { recursive: true, force: true });
    }
  }

  /** Set by resolveDirectOrigin (openBlobStore calls it at start). */
  directOrigin: string | undefined;

  /**
   * Learns the origin of this bucket's presigned URLs by presigning one (no
   * request is sent): the SDK alone knows how it addresses the bucket (path
   * or host style, AWS's regional host names, a custom endpoint).
   */
  async resolveDirectOrigin(): Promise<string> {
    const probe = await this.presignedGet('origin-probe', { now: Date.now(), ttlSeconds: 60, contentType: 'application/octet-stream', contentDisposition: 'attachment', cacheControl: 'no-store' });
    this.directOrigin = new URL(probe.url).origin;
    return this.directOrigin;
  }

  async presignedGet(key: string, { now, ttlSeconds, contentType, contentDisposition, cacheControl }: PresignedGetOptions): Promise<{ url: string; expires: number }> {
    // SigV4 dates are whole seconds (X-Amz-Date), and the URL works until X-Amz-Date + X-Amz-Expires: sign at the
    // second, so that the `expires` answered is exactly when S3 stops taking it.
    const signedAt = Math.floor(now / 1000) * 1000;
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: checkKey(key),
      // Query parameters, so the signature binds them: a holder of the URL cannot ask for another type or disposition.
      ResponseContentType: contentType,
      ResponseContentDisposition: contentDisposition,
      ResponseCacheControl: cacheControl,
    });
    const url = await getSignedUrl(this.client, command, { expiresIn: ttlSeconds, signingDate: new Date(signedAt) });
    return { url, expires: signedAt + ttlSeconds * 1000 };
  }

  async *list(prefix: string): AsyncIterable<string> {
    checkPrefix(prefix);
    let ContinuationToken: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken }));
      for (const object of page.Contents ?? []) yield object.Key!;
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
  }

  async sweepUnfinishedWrites(idleMs: number): Promise<number> {
    let removed = 0;
    for await (const upload of this.unfinishedWrites()) {
      // Started recently: surely not idle yet, and no need to look at its parts.
      if (upload.now - upload.initiated < idleMs) continue;
      const lastWritten = Math.max(upload.initiated, await this.lastPartWritten(upload.key, upload.uploadId));
      if (lastWritten === Number.POSITIVE_INFINITY || upload.now - lastWritten < idleMs) continue;
      try {
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: upload.key, UploadId: upload.uploadId }));
        removed++;
      } catch (error) {
        // It completed, or was aborted, meanwhile.
        if (!isNoSuchUpload(error)) throw error;
      }
    }
    return removed;
  }

  /**
   * The multipart uploads under way in the bucket, each with S3's clock when
   * it was listed: the Date header of the answer, a whole second, so at most
   * the true time; an upload is never taken for older than it is.
   */
  async *unfinishedWrites(): AsyncGenerator<{ key: string; uploadId: string; initiated: number; now: number }> {
    let KeyMarker: string | undefined;
    let UploadIdMarker: string | undefined;
    do {
      const { page, date } = await this.withDate(new ListMultipartUploadsCommand({ Bucket: this.bucket, KeyMarker, UploadIdMarker }));
      for (const upload of page.Uploads ?? []) {
        yield { key: upload.Key!, uploadId: upload.UploadId!, initiated: upload.Initiated?.getTime() ?? date, now: date };
      }
      [KeyMarker, UploadIdMarker] = page.IsTruncated ? [page.NextKeyMarker, page.NextUploadIdMarker] : [undefined, undefined];
    } while (KeyMarker);
  }

  /** When the latest part of an upload was stored (0 if none was); infinity if the upload is gone (so: leave it). */
  private async lastPartWritten(Key: string, UploadId: string): Promise<number> {
    let latest = 0;
    let PartNumberMarker: string | undefined;
    try {
      do {
        const page = await this.client.send(new ListPartsCommand({ Bucket: this.bucket, Key, UploadId, PartNumberMarker }));
        for (const part of page.Parts ?? []) latest = Math.max(latest, part.LastModified?.getTime() ?? 0);
        PartNumberMarker = page.IsTruncated ? page.NextPartNumberMarker : undefined;
      } while (PartNumberMarker);
    } catch (error) {
      if (isNoSuchUpload(error)) return Number.POSITIVE_INFINITY;
      throw error;
    }
    return latest;
  }

  /** A page of the multipart uploads under way, with the Date header S3 stamped it with, in ms. */
  private async withDate(command: ListMultipartUploadsCommand) {
    let date = Number.NaN;
    command.middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args);
        date = Date.parse((result.response as { headers?: Record<string, string> }).headers?.date ?? '');
        return result;
      },
      { step: 'deserialize', name: 'readDateHeader' },
    );
    const page = await this.client.send(command);
    // RFC 9110 section 6.6.1: "An origin server with a clock MUST generate a Date header field in all 2xx, 3xx,
    // and 4xx responses". Without one, the age of an upload cannot be told, and nothing is swept.
    if (!Number.isFinite(date)) throw new Error(`The S3 ${this.description} answered without a Date header; cannot tell how long its uploads have been idle.`);
    return { page, date };
  }
}

/**
 * Sends the parts of one multipart upload, at most `inFlight` at once. A part
 * that fails fails the write at its next send (or at finished). Part numbers
 * count from 1; keepAlive stores an empty placeholder under the number of
 * the part being filled, which that part replaces when it is sent.
 */
class PartUploader {
  private next = 1;
  private readonly running = new Set<Promise<void>>();
  private readonly etags: CompletedPart[] = [];
  private failure: unknown;
  private placeholder: { part: number; stored: Promise<void> } | undefined;
  private placeholderBusy = false;

  private readonly client: S3Client;
  private readonly upload: { Bucket: string; Key: string; UploadId: string };
  private readonly abortSignal: AbortSignal;
  private readonly inFlight: number;

  constructor(
    client: S3Client,
    upload: { Bucket: string; Key: string; UploadId: string },
    abortSignal: AbortSignal,
    inFlight: number,
  ) {
    this.client = client;
    this.upload = upload;
    this.abortSignal = abortSignal;
    this.inFlight = inFlight;
  }

  /** Sends the next part once a slot is free; resolves when it is under way. */
  async send(body: Buffer): Promise<void> {
    while (this.running.size >= this.inFlight) await Promise.race(this.running);
    this.throwIfFailed();
    const part = this.next++;
    const placeholder = this.placeholder?.part === part ? this.placeholder.stored : undefined;
    const sending = (async () => {
      // The placeholder must land before the part, never after it.
      await placeholder;
      const { ETag } = await this.client.send(new UploadPartCommand({ ...this.upload, PartNumber: part, Body: body, ContentLength: body.length }), {
        abortSignal: this.abortSignal,
      });
      this.etags.push({ PartNumber: part, ETag });
    })().catch((error: unknown) => {
      this.failure ??= error;
    });
    this.running.add(sending);
    void sending.finally(() => this.running.delete(sending));
  }

  /** Resolves once every part is stored; throws the first failure. */
  async finished(): Promise<void> {
    await Promise.all([...this.running, this.placeholder?.stored]);
    this.throwIfFailed();
  }

  get sending(): boolean {
    return this.running.size > 0;
  }

  completed(): CompletedPart[] {
    return [...this.etags].sort((a, b) => a.PartNumber! - b.PartNumber!);
  }

  keepAlive(): void {
    const part = this.next;
    // One placeholder at a time; each stored again moves the part's LastModified, which the sweep reads.
    if (this.placeholderBusy || this.abortSignal.aborted) return;
    this.placeholderBusy = true;
    const stored = this.client
      .send(new UploadPartCommand({ ...this.upload, PartNumber: part, Body: Buffer.alloc(0), ContentLength: 0 }), { abortSignal: this.abortSignal })
      // A failed placeholder changes nothing: the real part follows, and fails the write if the upload is gone.
      .then(
        () => {},
        () => {},
      )
      .finally(() => {
        this.placeholderBusy = false;
      });
    this.placeholder = { part, stored };
  }

  private throwIfFailed() {
    if (this.failure !== undefined) throw this.failure;
  }
}

/** Whether a process runs under this pid (one of another user counts: it runs). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isNotFound(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.$metadata?.httpStatusCode === 404 || error.name === 'NoSuchKey' || error.name === 'NotFound');
}

function isNoSuchUpload(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.name === 'NoSuchUpload' || error.$metadata?.httpStatusCode === 404);
}

/** As reading a missing file fails (ENOENT), so that callers need not know the backend. */
function noBlob(key: string, cause: unknown): Error {
  return Object.assign(new Error(`No blob ${key}`, { cause }), { code: 'ENOENT' });
}
