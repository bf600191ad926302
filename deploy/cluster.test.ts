/**
 * The deployment recipe, run: nginx (Debian's, with deploy/nginx's upstream
 * and proxy settings) in front of two API processes (`server/main.ts`,
 * PROCESSING=external) and two audio workers (`server/worker-main.ts`), on
 * one fresh PostgreSQL database and one radosgw bucket, all on loopback.
 *
 * 100 upload flows run at once, each as a client would: create the upload
 * URL through nginx, PUT the bytes to it, poll until the file is ready, ask
 * for the download URL and download. Meanwhile one API process gets SIGTERM
 * (a rolling restart: it drains, exits, and is started again) and one worker
 * gets SIGKILL while it holds a job (and is started again, as systemd's
 * Restart=always would).
 *
 * What must hold:
 * - every file arrives whole (the download's sha256 is the upload's), and
 *   the download URL points at the bucket, not at nginx;
 * - no idempotent request fails as the client sees it (nginx retries those
 *   on the other process); POSTs that fail are counted and reported;
 * - every job runs to completion exactly once: database triggers (test-only)
 *   record each change of a job's state and each write of a file's
 *   analysis, so a job completed twice, or an analysis written twice, shows.
 *
 * Bounded for two CPU cores: short real audio (ffmpeg lavfi), polls every
 * half second, and every wait is on an event or a condition with a deadline.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from '../server/testing/ports.ts';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../generated/client.ts';
import { hashPassword } from '../server/auth/passwords.ts';
import { openStore } from '../server/repositories.ts';
import { eventually, makeAudio } from '../server/testing/audio.ts';
import { createTestDatabase, type TestDatabase } from '../server/testing/databases.ts';
import { useTestS3 } from '../server/testing/s3.ts';
import { productionCommand } from '../server/testing/production-command.ts';

const root = resolve(import.meta.dirname, '..');
const FLOWS = 100;
const USERS = 10;
/** The password of the person who signs in through nginx (a session made by one API process, used on both). */
const CLUSTER_PASSWORD = "a cluster person's long passphrase";
const AUDIO_SECONDS = 2;
const INSTALL_NGINX = 'apt-get install -y --no-install-recommends nginx-light';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');


/** A child process of the cluster: its output (the last 64 KiB, for failures), a wait for a line, and its exit. */
interface Member {
  name: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  printed(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

function startMember(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): Member {
  const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const listeners = new Set<() => void>();
  const take = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-65536);
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
  return {
    name,
    child,
    exited,
    output: () => output,
    printed: (pattern, timeoutMs = 60_000) =>
      new Promise<string>((found, fail) => {
        const timer = setTimeout(() => done(() => fail(new Error(`${name} did not print ${pattern} within ${timeoutMs} ms:\n${output}`))), timeoutMs);
        const done = (then: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          then();
        };
        const check = () => {
          const line = output.split('\n').find((candidate) => pattern.test(candidate));
          if (line !== undefined) done(() => found(line));
        };
        listeners.add(check);
        void exited.then(({ code, signal }) => done(() => fail(new Error(`${name} exited (${signal ?? code}) before printing ${pattern}:\n${output}`))));
        check();
      }),
  };
}

async function stopMember(member: Member): Promise<void> {
  if (member.child.exitCode !== null || member.child.signalCode !== null) return;
  member.child.kill('SIGTERM');
  await member.exited;
}

/**
 * nginx's configuration for the test: the recipe's upstreams and the map
 * before its server blocks (with this run's ports) and its proxy settings
 * file, included as they are, in a main configuration that keeps everything
 * in `dir` and stays in the foreground.
 */
function nginxConfig(dir: string, port: number, apiPorts: [number, number]): string {
  const site = readFileSync(join(root, 'deploy/nginx/audio-share.conf'), 'utf8');
  const upstream = site.slice(0, site.search(/^server \{/m));
  if (!/^upstream audio_share_api \{/m.test(upstream)) throw new Error('deploy/nginx/audio-share.conf has no upstream audio_share_api block before its servers');
  const ours = upstream.replaceAll('127.0.0.1:8081', `127.0.0.1:${apiPorts[0]}`).replaceAll('127.0.0.1:8082', `127.0.0.1:${apiPorts[1]}`);
  if (ours === upstream) throw new Error('the upstream blocks no longer name 127.0.0.1:8081 and :8082');
  return `
daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
${process.getuid?.() === 0 ? 'user root;' : ''}
events { worker_connections 1024; }
http {
  log_format cluster '$request_method $uri $status "$upstream_addr" "$upstream_status" $request_time';
  access_log ${dir}/access.log cluster;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  ${ours}
  server {
    listen 127.0.0.1:${port};
    include ${join(root, 'deploy/nginx/audio-share-proxy.conf')};
  }
}
`;
}

/** Test-only triggers: a row for every change of a job's state or claim, and for every write to a file's status or analysis. */
const AUDIT_SQL = `
CREATE TABLE audit_jobs (job_id TEXT, old_status TEXT, new_status TEXT, attempts INTEGER, worker TEXT);
CREATE FUNCTION audit_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit_jobs VALUES (NEW.id, OLD.status, NEW.status, NEW.attempts, NEW.worker);
  RETURN NEW;
END $$;
CREATE TRIGGER audit_jobs AFTER UPDATE ON jobs FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.attempts IS DISTINCT FROM NEW.attempts) EXECUTE FUNCTION audit_jobs();
CREATE TABLE audit_boxes (box_id TEXT, old_status TEXT, new_status TEXT, wrote_analysis BOOLEAN);
CREATE FUNCTION audit_boxes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit_boxes VALUES (NEW.id, OLD.status, NEW.status, NEW.audio IS NOT NULL AND NEW.status = 'ready');
  RETURN NEW;
END $$;
CREATE TRIGGER audit_boxes AFTER UPDATE OF status, audio ON boxes FOR EACH ROW EXECUTE FUNCTION audit_boxes();
`;

/** What the clients saw: every request through nginx, by method, and those that failed (a 5xx, or no answer at all). */
class ClientLedger {
  readonly sent = new Map<string, number>();
  readonly failed: { method: string; path: string; outcome: string }[] = [];
  /** Requests sent and not yet answered, by method. */
  readonly inFlight = new Map<string, number>();
  /** A fetch that records what it sends and how it ends. */
  readonly fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const path = new URL(request.url).pathname;
    const count = (map: Map<string, number>, change: number) => map.set(request.method, (map.get(request.method) ?? 0) + change);
    count(this.sent, 1);
    count(this.inFlight, 1);
    try {
      const response = await fetch(request);
      if (response.status >= 500) this.failed.push({ method: request.method, path, outcome: String(response.status) });
      return response;
    } catch (error) {
      this.failed.push({ method: request.method, path, outcome: (error as { cause?: { code?: string } }).cause?.code ?? String(error) });
      throw error;
    } finally {
      count(this.inFlight, -1);
    }
  };
  /** The requests in flight now, as text. */
  underWay(): string {
    return [...this.inFlight].map(([method, n]) => `${method} ${n}`).join(', ');
  }
  failures(which: (method: string) => boolean) {
    return this.failed.filter((failure) => which(failure.method));
  }
}

describe('a cluster: nginx over 2 API processes and 2 workers, on PostgreSQL and radosgw', () => {
  const s3 = useTestS3();
  const scratch = mkdtempSync(join(tmpdir(), 'audio-share-cluster-'));
  const members: Member[] = [];
  let database: TestDatabase | undefined;
  afterAll(async () => {
    for (const member of members) await stopMember(member);
    await database?.drop();
    rmSync(scratch, { recursive: true, force: true });
  }, 60_000);

  it(`carries ${FLOWS} concurrent uploads whole, each processed once, while an API process is restarted and a worker killed`, async () => {
    const started = performance.now();
    const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
    const nginxPath = await promisify(execFile)('sh', ['-c', 'command -v nginx || ls /usr/sbin/nginx'])
      .then(({ stdout }) => stdout.trim())
      .catch(() => '');
    if (!nginxPath) throw new Error(`The cluster test runs Debian's nginx, which is not installed. Install it with: ${INSTALL_NGINX}`);

    // --- The engines: a fresh database, a bucket, ports. ---
    database = await createTestDatabase('postgres');
    const bucket = await s3.bucket();
    const [nginxPort, apiPort1, apiPort2] = [await freePort(), await freePort(), await freePort()];
    const publicUrl = `http://127.0.0.1:${nginxPort}`;
    const signingSecret = randomBytes(32).toString('base64');
    const common: NodeJS.ProcessEnv = {
      ...process.env,
      ...s3.env(bucket),
      DATABASE_URL: database.databaseUrl,
      SIGNING_SECRET: signingSecret,
      PUBLIC_URL: publicUrl,
      TRUST_PROXY: 'loopback',
      HOST: '127.0.0.1',
      PROCESSING: 'external',
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_SECONDS: '20',
      // A killed worker's job is taken up once its lease runs out: 4 s here, not a minute.
      JOB_LEASE_SECONDS: '4',
      JOB_POLL_MS: '100',
      // Every client of this test comes from 127.0.0.1: the per-address limit would count them all as one.
      RATE_LIMIT_IP_PER_SECOND: '100000',
      RATE_LIMIT_IP_BURST: '300000',
    };
    // Each process a DATA_DIR of its own, as on machines of their own (the signing secret is shared through SIGNING_SECRET).
    const dataDir = (name: string) => {
      const dir = join(scratch, name);
      mkdirSync(dir, { recursive: true });
      return dir;
    };
    // With the environment and node flags of the systemd units (npm start's), and a compile cache of this test's own, as the units' is.
    const { env: productionEnv, nodeArgs } = productionCommand(root);
    const withCache = { ...common, ...productionEnv, NODE_COMPILE_CACHE: join(scratch, 'compile-cache') };
    const startApi = (name: string, port: number) =>
      startMember(name, process.execPath, [...nodeArgs, 'server/main.ts'], { ...withCache, PORT: String(port), DATA_DIR: dataDir(name) });
    const startWorker = (name: string, dir = name) => startMember(name, process.execPath, [...nodeArgs, 'server/worker-main.ts'], { ...withCache, DATA_DIR: dataDir(dir) });

    // --- The processes. ---
    let api1 = startApi('api-1', apiPort1);
    const api2 = startApi('api-2', apiPort2);
    let worker1 = startWorker('worker-1');
    const worker2 = startWorker('worker-2');
    members.push(api1, api2, worker1, worker2);
    await Promise.all([api1.printed(/is listening at/), api2.printed(/is listening at/), worker1.printed(/^Audio worker .* is running/), worker2.printed(/^Audio worker .* is running/)]);
    const nginxDir = join(scratch, 'nginx');
    mkdirSync(nginxDir);
    writeFileSync(join(nginxDir, 'nginx.conf'), nginxConfig(nginxDir, nginxPort, [apiPort1, apiPort2]));
    const nginx = startMember('nginx', nginxPath, ['-p', nginxDir, '-c', join(nginxDir, 'nginx.conf'), '-e', join(nginxDir, 'error.log')], process.env);
    members.push(nginx);
    await eventually(async () => (await fetch(`${publicUrl}/readyz`).catch(() => undefined))?.status === 200, 'nginx answers /readyz from an API process', {
      timeoutMs: 20_000,
      intervalMs: 50,
    });
    const clusterUp = elapsed();

    // --- Instruments, users, audio. ---
    const db = new pg.Client({ connectionString: database.databaseUrl });
    await db.connect();
    try {
      await db.query(AUDIT_SQL);
      const store = await openStore({ databaseUrl: database.databaseUrl, dataDir: dataDir('setup') });
      const tokens: string[] = [];
      try {
        for (let i = 0; i < USERS; i++) {
          const user = await store.users.findOrCreate(`cluster-${i}@example.com`, Date.now());
          tokens.push((await store.tokens.create(user.id, 'cluster', Date.now())).secret);
        }
        const person = (await store.users.findByEmail('cluster-0@example.com'))!;
        await store.users.setPasswordHash(person.id, await hashPassword(CLUSTER_PASSWORD));
      } finally {
        await store.close();
      }

      // --- A person signs in through nginx; the session works on every API process (it lives in the database). ---
      const signIn = await fetch(`${publicUrl}/api/v1/auth/signin`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: publicUrl },
        body: JSON.stringify({ email: 'cluster-0@example.com', password: CLUSTER_PASSWORD }),
      });
      expect(signIn.status).toBe(200);
      const sessionCookie = signIn.headers.getSetCookie()[0].split(';')[0];
      const sessionReads = await Promise.all(Array.from({ length: 8 }, () => fetch(`${publicUrl}/api/v1/me/sessions`, { headers: { Cookie: sessionCookie } })));
      expect(sessionReads.map((response) => response.status)).toEqual(Array(8).fill(200));
      const servedBy = new Set(
        readFileSync(join(nginxDir, 'access.log'), 'utf8')
          .split('\n')
          .filter((line) => line.startsWith('GET /api/v1/me/sessions 200'))
          .map((line) => /"([^"]+)"/.exec(line)?.[1]),
      );
      // Round robin over two processes: eight reads reach both, and each knew the session made by one of them.
      expect(servedBy.size).toBe(2);
      const ledger = new ClientLedger();
      const apiUrl = `${publicUrl}/api/v1`;
      const clients = tokens.map((token) => createApiClient({ baseUrl: apiUrl, token, fetch: ledger.fetch }));
      const projects: string[] = [];
      for (const api of clients) {
        const { data, error } = await api.POST('/projects', { body: { name: 'Cluster' } });
        expect(error).toBeUndefined();
        projects.push(data!.id);
      }
      // Distinct audio for every flow (another pitch each), so that a file stored in another's place would show.
      const audio: Buffer[] = [];
      for (let i = 0; i < FLOWS; i += 4) {
        audio.push(
          ...(await Promise.all(
            Array.from({ length: Math.min(4, FLOWS - i) }, (_, j) =>
              makeAudio(`take-${i + j}.wav`, ['-f', 'lavfi', '-i', `sine=frequency=${200 + 7 * (i + j)}:sample_rate=44100:duration=${AUDIO_SECONDS}`, '-ac', '2', '-c:a', 'pcm_s16le']),
            ),
          )),
        );
      }
      const setUp = elapsed();

      // --- The flows, and the faults, at once. ---
      let putsDone = 0;
      const putDone = new Set<() => void>();
      const afterPuts = (count: number) =>
        new Promise<void>((reached) => {
          const check = () => {
            if (putsDone < count) return;
            putDone.delete(check);
            reached();
          };
          putDone.add(check);
          check();
        });
      const flow = async (index: number) => {
        const api = clients[index % USERS];
        const projectid = projects[index % USERS];
        const bytes = audio[index];
        // Step 1, the upload URL. A client whose POST failed does not know whether it was made: it asks again, and
        // gets another upload (the first, if it was made, expires unused and is swept).
        let upload: { url: string; headers: Record<string, string> } | undefined;
        let postAttempts = 0;
        while (!upload) {
          postAttempts++;
          const created = await api
            .POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: `take-${index}.wav`, mimeType: 'audio/wav', size: bytes.length } })
            .catch((error: unknown) => ({ thrown: error }));
          if ('data' in created && created.data) upload = created.data as typeof upload;
          else if (postAttempts >= 3) throw new Error(`flow ${index}: POST failed ${postAttempts} times: ${JSON.stringify(created)}`);
        }
        // Step 2, the bytes, to the signed URL (through nginx: PUBLIC_URL is nginx's address).
        expect(upload.url.startsWith(`${apiUrl}/upload/`), upload.url).toBe(true);
        // An upload's body streams through nginx unbuffered, so nginx cannot pass a PUT to the other process once it has
        // begun sending it: one that reached API process 1 just as its listener closed gets nginx's 502, and the client
        // sends it again, as it would after any gateway's 502 (the handler never ran, so the URL is not spent).
        let put = await ledger.fetch(upload.url, { method: 'PUT', headers: upload.headers, body: bytes });
        for (let attempt = 2; put.status === 502 && attempt <= 3; attempt++) put = await ledger.fetch(upload.url, { method: 'PUT', headers: upload.headers, body: bytes });
        if (!put.ok) throw new Error(`flow ${index}: PUT answered ${put.status}: ${await put.text()}`);
        const stored = (await put.json()) as { id: string; status: string };
        putsDone++;
        for (const check of [...putDone]) check();
        const fileid = stored.id;
        const ready = await api.waitUntilReady({ projectid, fileid }, { intervalMs: 500, timeoutMs: 150_000 });
        if (ready.error) throw new Error(`flow ${index}: waiting failed: ${JSON.stringify(ready.error)}`);
        expect(ready.data.status, `flow ${index}`).toBe('ready');
        const { data: download, error } = await api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path: { projectid, fileid } } });
        expect(error, `flow ${index}`).toBeUndefined();
        const downloaded = await fetch(download!.url);
        expect(downloaded.status).toBe(200);
        return { index, fileid, url: download!.url, sha256: sha256(new Uint8Array(await downloaded.arrayBuffer())), postAttempts };
      };
      const flows = Promise.allSettled(Array.from({ length: FLOWS }, (_, index) => flow(index)));

      // Writes in flight when the SIGTERM lands: a few clients POSTing new projects back to back, from a moment before
      // it until API process 1 is back (as ready as systemd's start of it). Each is a request nginx must not pass on to the other process once sent.
      let writing = true;
      const writes = { made: 0, failed: 0 };
      const writers = afterPuts(FLOWS / 10 - 2).then(() =>
        Promise.all(
          clients.slice(0, 4).map(async (api) => {
            while (writing) {
              const made = await api.POST('/projects', { body: { name: 'Written during the restart' } }).catch(() => undefined);
              if (made?.data) writes.made++;
              else writes.failed++;
            }
          }),
        ),
      );
      // SIGTERM to API process 1 once a tenth of the uploads are stored, with the rest of them under way; once it has
      // drained and exited, start it again on its port (a rolling restart).
      const restartApi = (async () => {
        await afterPuts(FLOWS / 10);
        const at = elapsed();
        const underWay = ledger.underWay();
        api1.child.kill('SIGTERM');
        const exit = await api1.exited;
        const exitedAt = elapsed();
        api1 = startApi('api-1-again', apiPort1);
        members.push(api1);
        await api1.printed(/is listening at/);
        const backAt = elapsed();
        writing = false;
        await writers;
        return { at, underWay, exit, exitedAt, backAt };
      })();
      // SIGKILL to worker 1 while it holds a job; then a new worker in its place, as systemd's Restart=always does.
      const pid1 = worker1.child.pid!;
      const killWorker = (async () => {
        let held: { id: string; worker: string }[] = [];
        await eventually(
          async () => {
            held = (await db.query("SELECT id, worker FROM jobs WHERE status = 'running' AND worker LIKE $1", [`%:${pid1}:%`])).rows;
            return held.length > 0;
          },
          'worker 1 holds a job',
          { timeoutMs: 60_000, intervalMs: 20 },
        );
        const at = elapsed();
        worker1.child.kill('SIGKILL');
        await worker1.exited;
        worker1 = startWorker('worker-1-again', 'worker-1');
        members.push(worker1);
        await worker1.printed(/^Audio worker .* is running/);
        return { at, jobs: held.map((job) => job.id), killedWorker: held[0].worker };
      })();

      const [restart, kill, outcomes] = await Promise.all([restartApi, killWorker, flows]);
      const flowsDone = elapsed();

      // --- Every flow ended well, every file whole, downloaded from the bucket. ---
      const rejected = outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => String((outcome as PromiseRejectedResult).reason));
      expect(rejected).toEqual([]);
      const results = outcomes.map((outcome) => (outcome as PromiseFulfilledResult<Awaited<ReturnType<typeof flow>>>).value);
      const endpoint = new URL(s3.settings.endpoint!).origin;
      for (const result of results) {
        expect(result.sha256, `flow ${result.index}`).toBe(sha256(audio[result.index]));
        expect(new URL(result.url).origin, `flow ${result.index}`).toBe(endpoint);
        expect(new URL(result.url).pathname, `flow ${result.index}`).toMatch(new RegExp(`^/${bucket}/`));
      }

      // --- What the clients saw fail. Idempotent requests: nothing (nginx retried them). POSTs: counted. ---
      const idempotentFailures = ledger.failures((method) => method !== 'POST');
      const postFailures = ledger.failures((method) => method === 'POST');
      // The only idempotent failures are upload PUTs caught as API process 1 closed (above), each sent again and stored.
      expect(idempotentFailures.filter((failure) => !(failure.method === 'PUT' && failure.outcome === '502'))).toEqual([]);
      // A POST nginx had sent when the process went away (a connection reset as the listener closed) is not retried:
      // the client gets nginx's 502, never a 5xx of the server's own, nor a dropped connection.
      expect(postFailures.filter((failure) => failure.outcome !== '502')).toEqual([]);

      // --- The API process drained and exited cleanly; the killed worker's job went to another worker. ---
      expect(restart.exit).toEqual({ code: 0, signal: null });
      const fileids = results.map((result) => result.fileid);
      const jobs = (await db.query<{ id: string; status: string; attempts: number; worker: string; box: string }>("SELECT id, status, attempts, worker, payload::json->>'boxId' AS box FROM jobs")).rows;
      const ourJobs = jobs.filter((job) => fileids.includes(job.box));
      // One job per file that was stored (a POST retried after a failure makes another file, never stored).
      expect(ourJobs).toHaveLength(FLOWS);
      expect(new Set(ourJobs.map((job) => job.box)).size).toBe(FLOWS);
      expect(ourJobs.filter((job) => job.status !== 'done')).toEqual([]);
      for (const id of kill.jobs) {
        const job = jobs.find((candidate) => candidate.id === id)!;
        expect(job.status).toBe('done');
        expect(job.attempts).toBeGreaterThanOrEqual(2);
        expect(job.worker).not.toBe(kill.killedWorker);
      }

      // --- Exactly once: each job completed once, each analysis written once and each file made ready once. ---
      const completions = (await db.query<{ job_id: string; n: number }>("SELECT job_id, count(*)::int AS n FROM audit_jobs WHERE new_status = 'done' GROUP BY job_id")).rows;
      expect(completions.filter((row) => row.n !== 1)).toEqual([]);
      expect(completions.map((row) => row.job_id).sort()).toEqual(ourJobs.map((job) => job.id).sort());
      const analyses = (await db.query<{ box_id: string; n: number }>('SELECT box_id, count(*)::int AS n FROM audit_boxes WHERE wrote_analysis GROUP BY box_id')).rows;
      expect(analyses.filter((row) => row.n !== 1)).toEqual([]);
      expect(analyses.map((row) => row.box_id).sort()).toEqual([...fileids].sort());
      // Claims: each time a worker took a job (a queued one, or one whose lease ran out).
      const claims = (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_jobs WHERE new_status = 'running'")).rows[0].n;

      // --- What nginx did: requests it passed to a second process. ---
      const access = readFileSync(join(nginxDir, 'access.log'), 'utf8').trim().split('\n');
      const retried = access.filter((line) => /"[^"]*, [^"]*"/.test(line.split(' ').slice(3).join(' ')));
      const retriedByMethod: Record<string, number> = {};
      for (const line of retried) retriedByMethod[line.split(' ')[0]] = (retriedByMethod[line.split(' ')[0]] ?? 0) + 1;

      // Connections nginx could not make or keep to an API process, each followed by a retry elsewhere or a failure above.
      const upstreamErrors = readFileSync(join(nginxDir, 'error.log'), 'utf8')
        .split('\n')
        .filter((line) => /\[error\].*upstream/.test(line));
      const upstreamErrorKinds: Record<string, number> = {};
      for (const line of upstreamErrors) {
        const kind = /\] \d+#\d+: \*\d+ (.*?) while/.exec(line)?.[1] ?? line;
        upstreamErrorKinds[kind] = (upstreamErrorKinds[kind] ?? 0) + 1;
      }

      console.log(
        [
          `cluster: up after ${clusterUp}; users, projects and ${FLOWS} WAVs (${AUDIO_SECONDS} s) ready after ${setUp}; all flows done after ${flowsDone}`,
          `  API 1: SIGTERM at ${restart.at} (requests in flight through nginx: ${restart.underWay}), exited ${restart.exit.code} at ${restart.exitedAt}, back at ${restart.backAt}`,
          `  worker 1: SIGKILL at ${kill.at} holding ${kill.jobs.length} job(s), each done later by another worker after attempt ${kill.jobs.map((id) => jobs.find((job) => job.id === id)!.attempts).join(', ')}`,
          `  requests through nginx: ${[...ledger.sent].map(([method, n]) => `${method} ${n}`).join(', ')}; passed on to the other process by nginx: ${JSON.stringify(retriedByMethod)}`,
          `  nginx's upstream errors: ${JSON.stringify(upstreamErrorKinds)}`,
          `  POSTs written back to back through the restart: ${writes.made} made, ${writes.failed} failed`,
          `  failed as the client saw them: idempotent ${idempotentFailures.length}, POST ${postFailures.length}${postFailures.length ? ` (${postFailures.map((failure) => failure.outcome).join(', ')})` : ''}`,
          `  jobs: ${ourJobs.length} done, ${claims} claims in all, each completed once; analyses written once each`,
        ].join('\n'),
      );
    } finally {
      await db.end();
    }
  }, 300_000);
});
