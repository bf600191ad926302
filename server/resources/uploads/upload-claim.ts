/**
 * A PUT's claim on its upload. Taking it writes a random token and a
 * deadline into the upload. While the PUT is alive the deadline is renewed
 * every third of UPLOAD_CLAIM_SECONDS, so an upload on a slow link keeps its
 * claim however long it takes; a PUT that sends no byte for a whole deadline
 * is given up. A claim is stale only when its server died (or lost its
 * database) without giving it back: then a new PUT to the same URL takes it
 * over, and the sweep frees it. Completing and releasing name the token,
 * so a PUT that lost its claim can change nothing.
 */
import { randomBytes } from 'node:crypto';
import type { Context } from '../../context.ts';
import { HttpProblem } from '../../lib/problems.ts';
import type { UploadRecord } from './upload-repository.ts';

/** The ports this service uses, and nothing more. */
type Ports = Pick<Context, 'store' | 'clock' | 'config' | 'logger'>;

export const seconds = (ms: number) => {
  const count = Math.ceil(ms / 1000);
  return `${count} ${count === 1 ? 'second' : 'seconds'}`;
};

export const claimLost = () =>
  new HttpProblem('upload-already-used',
    'This PUT lost its claim on the upload URL: it went past its deadline without renewing it, and another PUT or the sweep took the upload. Check the file\'s status before sending it again.',
  );

export class UploadClaim {
  readonly token = randomBytes(18).toString('base64url');
  private readonly aborter = new AbortController();
  private lastByteAt: number;
  private receiving = true;
  private renewing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  private readonly ctx: Ports;
  private readonly upload: UploadRecord;

  private constructor(
    ctx: Ports,
    upload: UploadRecord,
  ) {
    this.ctx = ctx;
    this.upload = upload;
    this.lastByteAt = ctx.clock.now();
  }

  /** Claims the upload for a PUT and starts renewing the claim; undefined when a live claim holds it or it has completed. */
  static async take(ctx: Ports, upload: UploadRecord): Promise<UploadClaim | undefined> {
    const claim = new UploadClaim(ctx, upload);
    const now = ctx.clock.now();
    if (!(await ctx.store.uploads.claim(upload.id, claim.token, now, now + ctx.config.uploadClaimMs))) return undefined;
    claim.timer = setInterval(() => claim.tick(), ctx.config.uploadClaimMs / 3);
    claim.timer.unref();
    return claim;
  }

  /** Aborted, with the problem to answer, when the claim is lost or the client stopped sending. */
  get signal(): AbortSignal {
    return this.aborter.signal;
  }

  /** For the blob store's onProgress: bytes are flowing. */
  readonly progress = (received: number) => {
    this.lastByteAt = this.ctx.clock.now();
    if (received >= this.upload.size) this.receiving = false;
  };

  private tick() {
    if (this.renewing || this.signal.aborted) return;
    if (this.receiving && this.ctx.clock.now() - this.lastByteAt > this.ctx.config.uploadClaimMs) {
      this.aborter.abort(new HttpProblem('request-timeout', `No bytes arrived for ${seconds(this.ctx.config.uploadClaimMs)}, so the upload was given up. PUT the whole file again.`));
      return;
    }
    this.renewing = this.renew()
      .catch((error) => {
        // The database is out of reach: keep going; the next tick tries again before the deadline runs out.
        if (!(error instanceof HttpProblem)) this.ctx.logger.warn('renewing an upload claim failed', { err: error, uploadId: this.upload.id });
      })
      .finally(() => {
        this.renewing = undefined;
      });
  }

  private async renew(): Promise<void> {
    if (!(await this.ctx.store.uploads.renew(this.upload.id, this.token, this.ctx.clock.now() + this.ctx.config.uploadClaimMs))) {
      const lost = claimLost();
      this.aborter.abort(lost);
      throw lost;
    }
  }

  /**
   * Renews the claim for a whole deadline, or throws when it is lost. Called
   * just before the bytes appear under their key: the holder then has the
   * whole deadline to put them there and commit, and nobody can take the
   * claim over meanwhile.
   */
  async confirm(): Promise<void> {
    this.receiving = false;
    await this.renewing;
    this.signal.throwIfAborted();
    await this.renew();
  }

  /** Stops renewing; the claim itself ends with complete or release. */
  stop() {
    clearInterval(this.timer);
  }

  /** Gives the claim back so that the URL can be used again. If that fails, the claim goes stale at its deadline anyway. */
  async release(): Promise<void> {
    this.stop();
    try {
      await this.ctx.store.uploads.release(this.upload.id, this.token);
    } catch (error) {
      this.ctx.logger.warn('releasing an upload claim failed; it goes stale at its deadline', { err: error, uploadId: this.upload.id });
    }
  }
}
