/**
 * What the scale-out parts of the bench need besides servers and an S3 store
 * (server/testing/s3-run.ts): nginx as the load balancer (the deploy
 * recipe's proxy settings). The CPU times they read are in proc.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');

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
  map $uri $audio_share_portal {
    ~^/api/v1/portal/(?<portal_player>[^/]+)/ $portal_player;
    default "";
  }
  upstream audio_share_portal {
    hash $audio_share_portal consistent;
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
