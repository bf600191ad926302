/**
 * The real server in a child process, as `npm start` runs it, for the tests
 * that kill it (SIGKILL) and start it again on the same data.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { until } from '../resources/uploads/upload-test-helpers.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** `node --import tsx server/main.ts`, as npm start runs it; ready once /healthz answers. */
export async function startServer(env: Record<string, string>): Promise<{ child: ChildProcess; output: () => string; exited: Promise<unknown> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  let gone = false;
  void exited.then(() => (gone = true));
  await until(
    async () => {
      if (gone) throw new Error(`The server exited while starting:\n${output}`);
      try {
        return (await fetch(`http://127.0.0.1:${env.PORT}/healthz`)).ok;
      } catch (error) {
        if ((error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED') return false; // not listening yet
        throw error;
      }
    },
    'the server to start',
    60_000,
  );
  return { child, output: () => output, exited };
}

