/**
 * The partners' sandbox (`npm run sandbox`): the real server, on a
 * throwaway database and folder, where any bearer token is accepted. A token
 * the sandbox has not seen gets an account of its own on its first request,
 * holding a demo project made through this very API, exactly as a partner
 * would make it (a folder, a stack of two versions, a single track, two
 * players, a comment), and analysed by the real audio pipeline before that
 * first request goes on. Each token sees only its own account; POST
 * /sandbox/reset puts it back to the demo.
 *
 * Only a server whose configuration says `sandbox` (SANDBOX=true, which
 * config.ts refuses beside DATABASE_URL or S3) does any of this.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createApiClient, type ApiClient } from '../../../generated/client.ts';
import type { Context } from '../../context.ts';
import { apiRoot } from '../../lib/api-root.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { Mutex } from '../../lib/mutex.ts';
import { notFound } from '../../lib/problems.ts';
import type { Caller } from '../../auth/access.ts';

type Ports = Pick<Context, 'store' | 'config' | 'clock' | 'media' | 'logger'>;

/** The demo's tracks: name, and the loudness of a 1 kHz-ish tone, so that loudness matching has something to match. */
const DEMO_AUDIO = [
  { name: 'night-drive-v1.flac', tone: 'sine=frequency=220:duration=6', gainDb: -18 },
  { name: 'night-drive-v2.flac', tone: 'sine=frequency=247:duration=6', gainDb: -10 },
  { name: 'intro.flac', tone: 'anoisesrc=color=pink:amplitude=0.2:duration=4', gainDb: -6 },
] as const;

/** The bytes of the demo's audio, made by ffmpeg once per process and shared by every account. */
let demoAudio: Promise<Map<string, Buffer>> | undefined;

function makeDemoAudio(ctx: Ports): Promise<Map<string, Buffer>> {
  demoAudio ??= (async () => {
    const folder = join(ctx.config.dataDir, 'tmp', 'sandbox-demo');
    await mkdir(folder, { recursive: true });
    const bytes = new Map<string, Buffer>();
    for (const track of DEMO_AUDIO) {
      const path = join(folder, track.name);
      await ctx.media.ffmpeg(['-f', 'lavfi', '-i', track.tone, '-af', `volume=${track.gainDb}dB`, '-ac', '2', '-ar', '44100', '-c:a', 'flac', path], () => {});
      bytes.set(track.name, await readFile(path));
    }
    await rm(folder, { recursive: true, force: true });
    return bytes;
  })();
  demoAudio.catch(() => (demoAudio = undefined));
  return demoAudio;
}

async function ok<T>(call: Promise<{ data?: T; error?: unknown }>, what: string): Promise<T> {
  const { data, error } = await call;
  if (data === undefined) throw new Error(`The sandbox could not make its demo (${what}): ${JSON.stringify(error)}`);
  return data;
}

/** Makes the demo project for the account of `token`, through the API, and waits until its audio is analysed. */
async function makeDemo(ctx: Ports, token: string): Promise<Schemas['SandboxState']> {
  const audio = await makeDemoAudio(ctx);
  const api: ApiClient = createApiClient({ baseUrl: apiRoot(ctx.config), token });
  const project = await ok(api.POST('/projects', { body: { name: 'Demo — Night Drive EP' } }), 'the project');
  const projectid = project.id;
  const folder = await ok(api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'Mixes', color: '#f59e0b' } }), 'the folder');
  const upload = (name: string, parentid?: string) =>
    ok(api.uploadFile(projectid, { name, mimeType: 'audio/flac', ...(parentid ? { parentid } : {}) }, audio.get(name)!), `the upload of ${name}`);
  const first = await upload('night-drive-v1.flac', folder.id);
  const second = await upload('night-drive-v2.flac', first.upload.stackid);
  const intro = await upload('intro.flac');
  const versions: Array<[string, string]> = [
    [first.box.id, 'v1 rough mix'],
    [second.box.id, 'v2 final'],
  ];
  for (const [fileid, versionName] of versions) {
    await ok(api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid } }, body: { versionName } }), 'a version name');
  }
  await ok(api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: first.upload.stackid } }, body: { name: 'Night Drive' } }), 'the stack name');
  for (const file of [first, second, intro]) {
    const settled = await ok(api.waitUntilReady(file, { timeoutMs: 120_000, intervalMs: 100 }), `the analysis of ${file.box.name}`);
    if (settled.status !== 'ready') throw new Error(`The sandbox's demo track ${file.box.name} could not be analysed: ${settled.statusReason}`);
  }
  await ok(
    api.POST('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid, fileid: second.box.id } }, body: { message: 'The kick sits much better in this one.', audioTimestamp: 2.5 } }),
    'the comment',
  );
  const review = await ok(
    api.POST('/players', {
      body: { name: 'Night Drive EP — for review', projectid, public: true, options: { stacks: true, comments: true, downloads: true, loudnessMatch: true, loudnessPlatform: 'spotify' } },
    }),
    'the review player',
  );
  const privatePlayer = await ok(api.POST('/players', { body: { name: 'Mixes — collaborators only', projectid, folderid: folder.id, public: false } }), 'the private player');
  return { object: 'sandbox', projectid, playerids: [review.id, privatePlayer.id] };
}

/** The sandbox's own address for a token: no mail is sent from a sandbox, and `.invalid` can never be delivered (RFC 2606). */
const emailOf = (token: string) => `partner-${createHash('sha256').update(token).digest('hex').slice(0, 16)}@sandbox.invalid`;

/** One at a time per process, so that two first requests with one token make one account. */
const provisioning = new Mutex();

/**
 * The account of a token the sandbox has not seen: made, with its demo,
 * before the request goes on. Undefined when this server is not a sandbox.
 */
export async function provisionSandboxAccount(ctx: Ports, token: string): Promise<{ id: string; email: string } | undefined> {
  if (!ctx.config.sandbox) return undefined;
  return provisioning.run(async () => {
    const known = await ctx.store.tokens.findHolder(token);
    if (known) return known.user;
    // A token the server made and revoked (an app's access token, after its grant ended) stays refused.
    if (await ctx.store.tokens.exists(token)) return undefined;
    const now = ctx.clock.now();
    const user = await ctx.store.users.findOrCreate(emailOf(token), now);
    await ctx.store.tokens.register(user.id, token, 'sandbox', now);
    ctx.logger.info('sandbox: a new token, a new account with the demo project', { userId: user.id });
    await makeDemo(ctx, token);
    return { id: user.id, email: user.email };
  });
}

/** POST /sandbox/reset: everything of the caller's account deleted, and a fresh demo made. */
export async function resetSandbox(ctx: Ports, caller: Caller, token: string): Promise<Schemas['SandboxState']> {
  if (!ctx.config.sandbox) throw notFound('This server is not a sandbox, so it has no account to reset. Start a sandbox with npm run sandbox.');
  await ctx.store.sandbox.deleteEverythingOf(caller.id);
  return makeDemo(ctx, token);
}
