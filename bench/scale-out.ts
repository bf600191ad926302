/**
 * What the scale-out parts of the bench need besides servers: an S3 store
 * (radosgw, started as the tests start it, or the one TEST_S3_ENDPOINT
 * names), nginx as the load balancer (the deploy recipe's proxy settings),
 * and a process's CPU time.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, PutBucketCorsCommand, type S3Client } from '@aws-sdk/client-s3';
import { createS3Client } from '../server/blobs/s3-blob-store.ts';
import { removeBucket, type S3Connection } from '../server/testing/s3.ts';

const root = resolve(import.meta.dirname, '..');

export interface BenchS3 {
  settings: S3Connection;
  client: S3Client;
  /** A new empty bucket, removed (with everything in it) by close(). */
  bucket(): Promise<string>;
  /** The server's environment for this store and `bucket`. */
  env(bucket: string): Record<string, string>;
  /** Removes the buckets made, and stops radosgw if this call started it. */
  close(): Promise<void>;
}

/** radosgw on loopback (scripts/radosgw.sh), or the S3 store TEST_S3_ENDPOINT names, as in the tests. */
export async function openBenchS3(): Promise<BenchS3> {
  let settings: S3Connection;
  let owner: string | undefined;
  if (process.env.TEST_S3_ENDPOINT) {
    settings = {
      endpoint: process.env.TEST_S3_ENDPOINT,
      region: process.env.TEST_S3_REGION || 'us-east-1',
      accessKeyId: process.env.TEST_S3_ACCESS_KEY_ID ?? '',
      secretAccessKey: process.env.TEST_S3_SECRET_ACCESS_KEY ?? '',
      forcePathStyle: (process.env.TEST_S3_FORCE_PATH_STYLE ?? 'true') === 'true',
    };
  } else {
    owner = `bench-${randomUUID()}`;
    const { stdout } = await promisify(execFile)(join(root, 'scripts/radosgw.sh'), ['start'], {
      // radosgw keeps objects in memory, deleted ones until its garbage collection minutes later: room for the gigabytes the parts write.
      env: { RADOSGW_MEMORY_BYTES: String(8 * 1024 ** 3), ...process.env, RADOSGW_OWNER: owner },
      timeout: 180_000,
    });
    const values = Object.fromEntries(stdout.trim().split('\n').map((line) => line.split(/=(.*)/s, 2) as [string, string]));
    settings = { endpoint: values.S3_ENDPOINT, region: values.S3_REGION, accessKeyId: values.S3_ACCESS_KEY_ID, secretAccessKey: values.S3_SECRET_ACCESS_KEY, forcePathStyle: values.S3_FORCE_PATH_STYLE === 'true' };
  }
  const client = createS3Client(settings);
  const buckets: string[] = [];
  return {
    settings,
    client,
    async bucket() {
      const name = `bench-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
      await client.send(new CreateBucketCommand({ Bucket: name }));
      // As deploy/README.md asks of a bucket that player pages read.
      await client.send(new PutBucketCorsCommand({ Bucket: name, CORSConfiguration: { CORSRules: [{ AllowedOrigins: ['*'], AllowedMethods: ['GET', 'HEAD'], AllowedHeaders: ['*'] }] } }));
      buckets.push(name);
      return name;
    },
    env(bucket) {
      return {
        BLOB_STORE: 's3',
        S3_ENDPOINT: settings.endpoint ?? '',
        S3_BUCKET: bucket,
        S3_REGION: settings.region,
        S3_ACCESS_KEY_ID: settings.accessKeyId,
        S3_SECRET_ACCESS_KEY: settings.secretAccessKey,
        S3_FORCE_PATH_STYLE: String(settings.forcePathStyle),
      };
    },
    async close() {
      for (const bucket of buckets) await removeBucket(client, bucket).catch(() => {});
      client.destroy();
      const dir = process.env.RADOSGW_DIR || join(tmpdir(), 'audio-share-radosgw');
      let startedBy = '';
      try {
        startedBy = readFileSync(join(dir, 'owner'), 'utf8').trim();
      } catch {}
      if (owner && startedBy === owner) await promisify(execFile)(join(root, 'scripts/radosgw.sh'), ['stop'], { timeout: 120_000 });
    },
  };
}

/**
 * nginx in front of `apiPorts`: the deploy recipe's proxy settings
 * (deploy/nginx/audio-share-proxy.conf) over an upstream of these ports,
 * with keep-alive to the upstream off as in the recipe. One worker process,
 * on `cpus`.
 */
export async function startNginx(port: number, apiPorts: number[], cpus: string): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-nginx-'));
  for (const folder of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, folder));
  const upstream = apiPorts.map((apiPort) => `    server 127.0.0.1:${apiPort} max_fails=1 fail_timeout=10s;`).join('\n');
  writeFileSync(
    join(dir, 'nginx.conf'),
    `
daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
${process.getuid?.() === 0 ? 'user root;' : ''}
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream audio_share_api {
${upstream}
  }
  server {
    listen 127.0.0.1:${port};
    include ${join(root, 'deploy/nginx/audio-share-proxy.conf')};
  }
}
`,
  );
  // Debian puts nginx in /usr/sbin, which is not on every user's PATH.
  const nginx = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';
  const child = spawn('taskset', ['-c', cpus, nginx, '-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const answer = await fetch(`${url}/readyz`).catch(() => undefined);
    if (answer?.status === 200) break;
    if (i > 200 || child.exitCode !== null) throw new Error(`nginx did not come up at ${url}: ${readFileSync(join(dir, 'error.log'), 'utf8')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    child,
    stop: () =>
      new Promise((done) => {
        child.once('exit', () => {
          rmSync(dir, { recursive: true, force: true });
          done();
        });
        child.kill('SIGQUIT');
      }),
  };
}

/** CPU seconds (user + system) a process has used so far: fields 14 and 15 of /proc/PID/stat, in clock ticks of 1/100 s. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: count from after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Seconds all cores have been busy (not idle nor waiting on I/O) since boot, from /proc/stat; the machine's CPU time. */
export function machineBusySeconds(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = ticks;
  return (user + nice + system + irq + softirq + steal) / 100;
}
