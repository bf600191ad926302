/**
 * A production install (`npm ci --omit=dev && npm start`) has only the
 * dependencies of package.json. These tests fail when `npm start` would
 * reach for a devDependency: one run by the start script itself (as the docs
 * build with @redocly/cli once was), or one imported by the server's code.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changelogPath, docsPath } from '../server/app.ts';
import { freePort } from '../server/testing/ports.ts';
import { until } from '../server/testing/until.ts';

const root = resolve(import.meta.dirname, '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  engines: Record<string, string>;
};

/** The packages a module imports at run time (type-only imports are erased), and the local modules it imports. */
function importsOf(file: string): { packages: string[]; local: string[] } {
  const source = readFileSync(file, 'utf8');
  const packages: string[] = [];
  const local: string[] = [];
  const pattern = /(?:^|\n)\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (const match of source.matchAll(pattern)) {
    const specifier = match[1] ?? match[2];
    if (specifier.startsWith('.')) local.push(resolve(dirname(file), specifier));
    else if (!specifier.startsWith('node:') && !builtinModules.includes(specifier)) {
      packages.push(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]);
    }
  }
  return { packages, local };
}

/** Every package the modules reachable from these entry points import at run time, with a file that imports it. */
function runtimePackages(entries: string[]): Map<string, string> {
  const seen = new Set<string>();
  const packages = new Map<string, string>();
  const queue = entries.map((entry) => join(root, entry));
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file) || !/\.(ts|js|mjs)$/.test(file) || !existsSync(file)) continue;
    seen.add(file);
    const { packages: imported, local } = importsOf(file);
    for (const name of imported) if (!packages.has(name)) packages.set(name, file.slice(root.length + 1));
    queue.push(...local);
  }
  return packages;
}

describe('a production install', () => {
  it('runs npm start, npm run admin and npm run worker on Node itself, with no loader and no build step', () => {
    // Node 24 strips the types of erasable TypeScript itself; tsx and esbuild are for development only.
    for (const script of ['start', 'admin', 'worker']) expect(manifest.scripts[script]).toMatch(/^node server\/[\w/-]+\.ts$/);
    for (const tool of ['tsx', 'esbuild']) expect(manifest.dependencies[tool], tool).toBeUndefined();
    expect(manifest.engines.node).toBe('>=24');
  });

  it('installs with npm ci --omit=dev, without tsx or esbuild, and npm start answers /healthz', { timeout: 240_000 }, async () => {
    const copy = mkdtempSync(join(tmpdir(), 'production-install-'));
    try {
      // The committed tree as a clean clone has it, without node_modules.
      const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
      for (const file of files) {
        if (!existsSync(join(root, file))) continue;
        mkdirSync(dirname(join(copy, file)), { recursive: true });
        copyFileSync(join(root, file), join(copy, file));
      }
      execFileSync('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: copy, stdio: 'ignore' });
      for (const tool of ['tsx', 'esbuild', 'vitest', 'typescript']) expect(existsSync(join(copy, 'node_modules', tool)), tool).toBe(false);
      const port = await freePort();
      const child = spawn('npm', ['start'], { cwd: copy, env: { ...process.env, PORT: String(port), DATA_DIR: join(copy, 'data'), DATABASE_URL: '' }, stdio: 'ignore', detached: true });
      try {
        const health = await until(async () => {
          const answer = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
          return answer?.ok ? ((await answer.json()) as { status: string }) : undefined;
        }, 'npm start to answer /healthz', 60_000);
        expect(health.status).toBe('ok');
      } finally {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = once(child, 'exit');
          process.kill(-child.pid!, 'SIGTERM');
          await exited;
        }
      }
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('imports, from the server and its entry points, only packages of dependencies', () => {
    const used = runtimePackages(['server/main.ts', 'server/admin/cli.ts', 'server/worker-main.ts']);
    // The walk reaches the server for real: these are imported at the heart of it.
    expect([...used.keys()]).toEqual(expect.arrayContaining(['express', 'express-openapi-validator', 'better-sqlite3', 'pg']));
    const missing = [...used].filter(([name]) => !(name in manifest.dependencies)).map(([name, file]) => `${name} (imported by ${file})`);
    expect(missing, 'packages a production install lacks').toEqual([]);
  });

  it('serves the docs from generated/docs.html, a committed file, not from a build at start', () => {
    expect(docsPath).toBe(join(root, 'generated/docs.html'));
    expect(existsSync(docsPath)).toBe(true);
    expect(readFileSync(docsPath, 'utf8')).toContain('<title>Audio Share API</title>');
  });

  it('serves the changelog from generated/changelog.html, a committed file, not from a build at start', () => {
    expect(changelogPath).toBe(join(root, 'generated/changelog.html'));
    expect(readFileSync(changelogPath, 'utf8')).toContain('<h1>Changelog</h1>');
  });
});
