/**
 * Starting the servers the parts measure: each in a process of its own, pinned with taskset, run as production runs
 * it (npm start's environment and node flags), on this Node or BENCH_SERVER_NODE from BENCH_SERVER_ROOT.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../contract-tests/support/ports.ts';
import { productionCommand } from '../../server/testing/production-command.ts';
import { root } from './settings.ts';

export interface Started {
  child: ChildProcess;
  url: string;
  port: number;
  dataDir: string;
  /** DATABASE_URL, when the server is on PostgreSQL. */
  databaseUrl: string;
  /** The tree it runs from (serverRoot, unless started from another checkout). */
  tree: string;
  stop(): Promise<void>;
}

/** Every server started and not yet stopped: a part that throws leaves none running behind it (nor holding the output pipe open). */
export const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * The runtime the servers run on: this process's Node, or BENCH_SERVER_NODE
 * from the tree BENCH_SERVER_ROOT (bench/runtimes.ts sets both to run the same
 * servers on Node 20). A Node that strips types itself (22.18 and newer) runs
 * the TypeScript as production does; an older one through tsx.
 */
export const serverNode = process.env.BENCH_SERVER_NODE ?? process.execPath;
export const serverRoot = process.env.BENCH_SERVER_ROOT ?? root;
let stripsTypes: boolean | undefined;
// Asked on the first start, not on import: loading the parts (--list, the README's check) starts no process.
const serverStripsTypes = () =>
  (stripsTypes ??= (() => {
    const [major, minor] = spawnSync(serverNode, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim().split('.').map(Number);
    return major > 22 || (major === 22 && minor >= 18);
  })());
/**
 * Every server here runs with npm start's environment and node flags (two malloc arenas, a smaller young generation,
 * the compile cache), as the systemd units run it, and with a compile cache of this run's own: the first start fills
 * it, as a deployment's first start does, and every later one reads it.
 */
const production = productionCommand(serverRoot);
let compileCacheDir: string | undefined;
// Made on the first start, for the same reason: an import leaves no folder behind.
const compileCache = () => (compileCacheDir ??= mkdtempSync(join(tmpdir(), 'bench-compile-cache-')));
export const serverArgs = (script: string) => [...production.nodeArgs, ...(serverStripsTypes() ? [script] : ['--import', 'tsx', script])];

/**
 * `pinned`: on core 1 (true), on the cores named (such as '0'), or anywhere (false). `tree`: the checkout the script
 * runs from, serverRoot by default (the stages part runs an older commit's server from a worktree of its own).
 * `extraNodeArgs`: node arguments for this server alone (the stages part profiles one), after BENCH_NODE_ARGS.
 */
export async function start(script: string, env: Record<string, string> = {}, pinned: boolean | string = true, tree = serverRoot, extraNodeArgs: string[] = []): Promise<Started> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-'));
  // Each server gets core 1 to itself and the load generator (this process) core 0,
  // so that the two never compete and runs are comparable.
  const command = pinned ? ['taskset', '-c', pinned === true ? '1' : pinned, serverNode] : [serverNode];
  // BENCH_NODE_ARGS reach every server started here, for example `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile them.
  const nodeArgs = [...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), ...extraNodeArgs];
  const child = spawn(command[0], [...command.slice(1), ...nodeArgs, ...serverArgs(script)], {
    cwd: tree,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, PUBLIC_URL: `http://127.0.0.1:${port}`, RATE_LIMIT_PER_SECOND: '0', LOG_LEVEL: 'info', DATABASE_URL: '', NODE_COMPILE_CACHE: compileCache(), ...production.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      await fetch(url + '/healthz');
      break;
    } catch {
      if (i > 200) throw new Error(`${script} did not start`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    child,
    url,
    port,
    dataDir,
    databaseUrl: env.DATABASE_URL ?? '',
    tree,
    stop: () =>
      new Promise((done) => {
        child.once('exit', () => {
          rmSync(dataDir, { recursive: true, force: true });
          done();
        });
        child.kill('SIGTERM');
      }),
  };
}
