/**
 * `npm run bench:runtimes -- reads view webhooks`: the bench's parts run
 * twice in one invocation, their servers (and the baselines they are
 * compared with) on Node 24, this process's runtime, then on Node 20
 * (Debian's, in a copy of the repository whose modules run on it:
 * bench/node20-tree.sh). Each run's ratios are against baselines of the same
 * runtime and run; the figures are then printed side by side, line for line.
 *
 * The parts that measure ffmpeg, Chromium or S3 more than Node (audio,
 * play, s3-*) are best left out: they take long and say little of the
 * runtime. Default: reads, view, upload, webhooks.
 */
import { spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const parts = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['reads', 'view', 'upload', 'webhooks'];
const node20 = process.env.NODE20 ?? '/usr/bin/node';

function runBench(label: string, env: Record<string, string>): Promise<string[]> {
  console.log(`\n## ${label}\n`);
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['bench/run.ts', ...parts], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      text += chunk;
    });
    child.once('error', fail);
    child.once('exit', () => done(text.split('\n').filter((line) => line.trim() !== '')));
  });
}

const tree = spawnSync('bash', ['bench/node20-tree.sh'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE20: node20 } });
if (tree.status !== 0) {
  console.error('No Node 20 to compare with (bench/node20-tree.sh failed); set NODE20 to a Node 20 binary.');
  process.exit(2);
}
const version20 = spawnSync(node20, ['-p', 'process.version'], { encoding: 'utf8' }).stdout.trim();
const on24 = await runBench(`Node ${process.version} (servers run node server/main.ts)`, {});
const on20 = await runBench(`Node ${version20} (servers run node --import tsx server/main.ts)`, { BENCH_SERVER_NODE: node20, BENCH_SERVER_ROOT: tree.stdout.trim() });

// Side by side: each line of the Node 24 run beside the line of the Node 20 run that begins with the same words.
const labelOf = (line: string) => line.split(/[\d(]/)[0].trim();
console.log(`\n## Side by side: Node ${process.version} | Node ${version20}\n`);
const unmatched = [...on20];
for (const line of on24.slice(1)) {
  const at = unmatched.findIndex((other) => labelOf(other) === labelOf(line));
  const other = at >= 0 ? unmatched.splice(at, 1)[0] : '(no such line)';
  console.log(`- ${line}\n  ${other.startsWith(labelOf(line)) ? other.slice(labelOf(line).length).trim() : other}`);
}
