/**
 * The player on an S3 bucket (radosgw): the signed URLs of the listener's
 * view are checked by the server on every use, as on disk, and then answered
 * with a redirect to a short-lived presigned GET of the bucket, so the audio,
 * peaks and artwork bytes never pass through Node. The page plays from the
 * bucket in Chromium under its CSP, which names the bucket's origin and no
 * other, with the bucket's CORS letting Web Audio hear the stream.
 */
import { PutBucketCorsCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../server/testing/harness.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { useTestS3 } from '../server/testing/s3.ts';
import { BUCKET_REDIRECT_TTL_MS } from '../server/resources/downloads/downloads-service.ts';
import { LISTENING_SERVER_ENV, createPlayer, grantUrls, listenerView, makeSmallProject, updatePlayer, type FixtureTrack, type Player } from './testing/player-fixtures.ts';
import { playAndAdvance, waitForReady, watchedPage } from './testing/player-browser.ts';

const BROWSER_TEST_MS = 90_000;

/** X-Amz-Date (20261124T150102Z) as ms since the epoch. */
const amzDate = (value: string) => Date.parse(value.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));

describe('the player on an S3 bucket (radosgw)', { timeout: BROWSER_TEST_MS }, () => {
  const s3 = useTestS3();
  // Filled in before the server starts (its beforeAll runs after this one).
  const env: Record<string, string> = { ...LISTENING_SERVER_ENV };
  let bucketOrigin: string;
  beforeAll(async () => {
    const bucket = await s3.bucket();
    Object.assign(env, s3.env(bucket));
    bucketOrigin = new URL(s3.settings.endpoint!).origin;
    // What deploy/README.md asks of the operator: the page's origin may read the bucket with CORS (Web Audio, fetch).
    await s3.client.send(
      new PutBucketCorsCommand({
        Bucket: bucket,
        CORSConfiguration: {
          CORSRules: [{ AllowedOrigins: ['*'], AllowedMethods: ['GET', 'HEAD'], AllowedHeaders: ['*'], ExposeHeaders: ['Content-Range', 'Content-Length', 'Accept-Ranges', 'ETag'], MaxAgeSeconds: 3600 }],
        },
      }),
    );
  });
  const t = useTestServer('sqlite', env);
  const chromium = useBrowser();
  let track: FixtureTrack;
  let projectid: string;

  // Nested, so that this hook runs once the server (started by useTestServer's own hook) is up.
  describe('a project of one track', () => {
    beforeAll(async () => {
      ({ projectid, track } = await makeSmallProject(t, 'On the bucket'));
    }, 120_000);

    it("answers the view's URLs with a redirect to the bucket after checking them, and refuses them once the player no longer allows it", async () => {
      const player: Player = await createPlayer(t, { projectid, name: 'Redirects', options: { downloads: true } });
      const view = await listenerView(t, player.id);
      const urls = grantUrls(view);
      expect(urls.length).toBeGreaterThanOrEqual(3);
      for (const url of urls) {
        // Every URL of the view is still the server's own: only the server can check the player's rules on each use.
        expect(url.startsWith(t.server.apiUrl), url).toBe(true);
        const redirected = await fetch(url, { redirect: 'manual' });
        expect(redirected.status, url).toBe(307);
        expect(redirected.headers.get('cache-control')).toBe('private, no-store');
        const target = new URL(redirected.headers.get('location')!);
        expect(target.origin).toBe(bucketOrigin);
        const signedAt = amzDate(target.searchParams.get('X-Amz-Date')!);
        const lifetimeMs = Number(target.searchParams.get('X-Amz-Expires')) * 1000;
        expect(lifetimeMs).toBeGreaterThan(0);
        expect(lifetimeMs).toBeLessThanOrEqual(BUCKET_REDIRECT_TTL_MS);
        expect(signedAt + lifetimeMs).toBeLessThanOrEqual(view.urlsExpire);
      }

      // The stream, from the bucket: Range and CORS as the page's <audio crossorigin> needs them.
      const stream = Object.values(view.tracks[0].versions[0].streams ?? {})[0]!;
      const ranged = await fetch(stream, { headers: { Range: 'bytes=0-3', Origin: t.server.address } });
      expect(ranged.status).toBe(206);
      expect(new URL(ranged.url).origin).toBe(bucketOrigin);
      expect(ranged.headers.get('content-range')).toMatch(/^bytes 0-3\/\d+$/);
      expect(ranged.headers.get('access-control-allow-origin')).toMatch(/^(\*|http:\/\/127\.0\.0\.1:\d+)$/);
      expect(Buffer.from(await ranged.arrayBuffer()).toString('latin1')).toMatch(/^(fLaC|ftyp|\0\0\0)/);

      // A password set: the URLs the listener had answer 4xx at the server, and the bucket is never reached.
      await updatePlayer(t, player.id, { password: 'correct horse battery' });
      for (const url of urls) {
        const refused = await fetch(url, { redirect: 'manual' });
        expect(refused.status, url).toBeGreaterThanOrEqual(400);
        expect(refused.status, url).toBeLessThan(500);
        expect(refused.headers.get('location')).toBeNull();
      }
    });

    it('plays in Chromium from the bucket, under a CSP that names the bucket and nothing else', async () => {
      const player = await createPlayer(t, { projectid, name: 'Played from the bucket', options: { loudnessMatch: true } });
      const watched = await watchedPage(chromium.browser);
      const { page } = watched;
      const fromBucket: Array<{ url: string; status: number; type: string }> = [];
      page.on('response', (response) => {
        if (new URL(response.url()).origin === bucketOrigin) fromBucket.push({ url: response.url(), status: response.status(), type: response.request().resourceType() });
      });
      const response = await page.goto(player.playerUrl!);
      const csp = (await response!.allHeaders())['content-security-policy'] ?? '';
      for (const directive of ['media-src', 'img-src', 'connect-src']) expect(csp).toContain(`${directive} 'self' ${bucketOrigin};`);
      expect(csp).toMatch(/script-src 'self';/);
      await waitForReady(page);
      const playing = await playAndAdvance(page, 1);
      expect(playing).toMatchObject({ trackId: track.id, error: null });
      // The audio came from the bucket (200 or 206), not through the server.
      expect(fromBucket.filter((answer) => answer.type === 'media' && answer.status < 300).length).toBeGreaterThan(0);
      expect(await watched.problems()).toEqual([]);
      await watched.close();
    });
  });
});
