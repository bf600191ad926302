/**
 * The bench's `bundle` part. What it measures, and how, is its paragraph of bench/README.md's list of parts,
 * kept in bundle.md beside this file and written into the README by `npm run bench:readme`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { start } from '../lib/servers.ts';
import { root } from '../lib/settings.ts';
import type { BenchPart, PartContext } from '../lib/part.ts';

async function run({ say, failures }: PartContext): Promise<void> {
  // --- the player page's JavaScript and CSS, gzipped -------------------------------
  // What a listener's browser fetches to draw the page, as the build writes it (scripts/build-player.ts), each
  // file gzipped at level 9 (zlib). The budget is for the two together.
  const budgetBytes = 150_000;
  const files = ['player.js', 'player.css'].map((name) => {
    const path = join(root, 'generated/player', name);
    if (!existsSync(path)) throw new Error(`${path} is missing: the player page's bundle is built by npm run generate`);
    const bytes = readFileSync(path);
    return { name, bytes: bytes.length, gzipped: gzipSync(bytes, { level: 9 }).length };
  });
  const total = files.reduce((sum, file) => sum + file.gzipped, 0);
  const kB = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;
  for (const file of files) say(`player page ${file.name}: ${kB(file.bytes)}, gzipped (level 9) ${kB(file.gzipped)}`);
  say(`player page JavaScript and CSS, gzipped: ${kB(total)} of a ${kB(budgetBytes)} budget (${((100 * total) / budgetBytes).toFixed(0)} %), ${total <= budgetBytes ? 'within' : 'OVER'}`);
  if (total > budgetBytes) failures.push(`player page JavaScript and CSS: ${kB(total)} gzipped, budget ${kB(budgetBytes)}`);
  // What the server itself sends for them to a browser that accepts compressed answers: the bytes on the wire, unless
  // a proxy in front compresses them.
  const server = await start('server/main.ts');
  for (const name of ['player.js', 'player.css']) {
    const wire = await new Promise<{ bytes: number; encoding: string }>((done, fail) => {
      const asked = request(`${server.url}/assets/${name}`, { headers: { 'Accept-Encoding': 'gzip, deflate, br' } }, (res) => {
        if (res.statusCode !== 200) return fail(new Error(`/assets/${name} answered ${res.statusCode}`));
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => done({ bytes, encoding: res.headers['content-encoding'] ?? 'none' }));
      });
      asked.on('error', fail);
      asked.end();
    });
    say(`  served by the server (Accept-Encoding: gzip, deflate, br): /assets/${name} ${kB(wire.bytes)}, Content-Encoding ${wire.encoding}`);
  }
  await server.stop();
}

export const part: BenchPart = {
  name: 'bundle',
  title: 'Bundle',
  summary: 'the player page\'s player.js and player.css gzipped (level 9), against a budget of 150 kB for the two.',
  readme: new URL('./bundle.md', import.meta.url),
  run,
};
