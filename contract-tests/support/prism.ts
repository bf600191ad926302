/** Runs the Prism mock of the bundled spec on a free loopback port. */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { freePort } from './ports.ts';

const root = resolve(import.meta.dirname, '../..');

export async function startPrismMock(): Promise<{ baseUrl: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn(resolve(root, 'node_modules/.bin/prism'), ['mock', 'generated/openapi.json', '-h', '127.0.0.1', '-p', String(port)], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`Prism did not start within 60 s:\n${output}`)), 60_000);
    const watch = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Prism is listening')) {
        clearTimeout(timer);
        ready();
      }
    };
    child.stdout.on('data', watch);
    child.stderr.on('data', watch);
    child.once('exit', (code) => fail(new Error(`Prism exited with code ${code}:\n${output}`)));
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}
