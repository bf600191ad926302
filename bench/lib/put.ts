/** One large PUT, streamed, for the upload parts. */
import { request } from 'node:http';
import { rssKiB } from './proc.ts';
import { uploadBytes } from './settings.ts';

/** Streams `bytes` of data in one PUT; resolves to the elapsed seconds and the peak RSS growth of the server. */
export function put(url: string, headers: Record<string, string>, pid: number, bytes = uploadBytes): Promise<{ seconds: number; rssGrowthMiB: number; status: number }> {
  const chunk = Buffer.alloc(1 << 20, 7);
  const target = new URL(url);
  const baseline = rssKiB(pid);
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, rssKiB(pid))), 25);
  const started = process.hrtime.bigint();
  return new Promise((done, fail) => {
    const req = request({ host: target.hostname, port: target.port, path: target.pathname + target.search, method: 'PUT', headers: { ...headers, 'Content-Length': String(bytes) } }, (res) => {
      res.resume();
      res.on('end', () => {
        clearInterval(sampler);
        done({ seconds: Number(process.hrtime.bigint() - started) / 1e9, rssGrowthMiB: (peak - baseline) / 1024, status: res.statusCode! });
      });
    });
    req.on('error', fail);
    let sent = 0;
    const write = () => {
      while (sent < bytes) {
        const piece = bytes - sent >= chunk.length ? chunk : chunk.subarray(0, bytes - sent);
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}
