/**
 * A production install (`npm ci --omit=dev && npm start`) has only the
 * dependencies of package.json. These tests fail when `npm start` would
 * reach for a devDependency: one run by the start script itself (as the docs
 * build with @redocly/cli once was), or one imported by the server's code.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changelogPath, docsPath } from '../server/app.ts';
import { freePort } from '../server/testing/ports.ts';
import { until } from '../server/testing/until.ts';
import { commandOf, productionCommand } from '../server/testing/production-command.ts';

const root = resolve(import.meta.dirname, '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  engines: Record<string, string>;
};

/**
 * The packages a module imports at run time (type-only imports are erased), and the local modules it imports:
 * with `import()` calls, or, with `staticOnly`, only those loaded with the module itself.
 */
function importsOf(file: string, staticOnly = false): { packages: Array<{ name: string; specifier: string }>; local: string[] } {
  const source = readFileSync(file, 'utf8');
  const packages: Array<{ name: string; specifier: string }> = [];
  const local: string[] = [];
  const pattern = /(?:^|\n)\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (const match of source.matchAll(pattern)) {
    if (staticOnly && match[1] === undefined) continue;
    const specifier = match[1] ?? match[2];
    if (specifier.startsWith('.')) local.push(resolve(dirname(file), specifier));
    else if (!specifier.startsWith('node:') && !builtinModules.includes(specifier)) {
      packages.push({ name: specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0], specifier });
    }
  }
  return { packages, local };
}

/** Every package the modules reachable from these entry points import at run time, with a file that imports it and the specifiers used. */
function runtimePackages(entries: string[], staticOnly = false): Map<string, { file: string; specifiers: string[] }> {
  const seen = new Set<string>();
  const packages = new Map<string, { file: string; specifiers: string[] }>();
  const queue = entries.map((entry) => join(root, entry));
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file) || !/\.(ts|js|mjs)$/.test(file) || !existsSync(file)) continue;
    seen.add(file);
    const { packages: imported, local } = importsOf(file, staticOnly);
    for (const { name, specifier } of imported) {
      const found = packages.get(name) ?? { file: file.slice(root.length + 1), specifiers: [] };
      if (!found.specifiers.includes(specifier)) found.specifiers.push(specifier);
      packages.set(name, found);
    }
    queue.push(...local);
  }
  return packages;
}

describe('a production install', () => {
  it('runs npm start, npm run admin and npm run worker on Node itself, with no loader and no build step', () => {
    // Node 24 strips the types of erasable TypeScript itself; tsx and esbuild are for development only.
    // Flags for memory (a smaller young generation) and the compile cache, whose preload is JavaScript: no loader.
    for (const script of ['start', 'admin', 'worker']) {
      expect(manifest.scripts[script]).toMatch(/^(MALLOC_ARENA_MAX=\d+ )?node (--max-semi-space-size=\d+ --import \.\/server\/compile-cache\.js )?server\/[\w/-]+\.ts$/);
    }
    for (const tool of ['tsx', 'esbuild']) expect(manifest.dependencies[tool], tool).toBeUndefined();
    expect(manifest.engines.node).toBe('>=24');
  });

  it('runs the server and the worker with the same environment and node flags in npm start, npm run worker and the systemd units', () => {
    const production = productionCommand(root);
    expect(production).toEqual({ env: { MALLOC_ARENA_MAX: '2' }, nodeArgs: ['--max-semi-space-size=8', '--import', './server/compile-cache.js'] });
    expect(commandOf(manifest.scripts.worker)).toEqual(production);
    for (const unit of ['audio-share-api@.service', 'audio-share-worker@.service']) {
      const text = readFileSync(join(root, 'deploy/systemd', unit), 'utf8');
      expect(commandOf(/^ExecStart=(.*)$/m.exec(text)![1]).nodeArgs, unit).toEqual(production.nodeArgs);
      for (const [name, value] of Object.entries(production.env)) expect(text, unit).toContain(`\nEnvironment=${name}=${value}\n`);
    }
  });

  it('keeps a compile cache: a second start strips no TypeScript, and uses less memory', { timeout: 60_000 }, async () => {
    // Exactly what server/compile-cache.js does, on a copy of its cache directory's parent, so this test's cache is its own.
    const copy = mkdtempSync(join(tmpdir(), 'compile-cache-'));
    try {
      mkdirSync(join(copy, 'server'));
      copyFileSync(join(root, 'server/compile-cache.js'), join(copy, 'server/compile-cache.js'));
      copyFileSync(join(root, 'package.json'), join(copy, 'package.json'));
      writeFileSync(join(copy, 'server/entry.ts'), "const n: number = 1;\nconsole.log(JSON.stringify({ n, rss: process.memoryUsage().rss }));\n");
      const run = () => JSON.parse(execFileSync(process.execPath, ['--import', './server/compile-cache.js', 'server/entry.ts'], { cwd: copy, encoding: 'utf8' })) as { n: number; rss: number };
      const first = run();
      expect(readdirSync(join(copy, 'node_modules/.cache/audio-share-compile-cache')).length).toBeGreaterThan(0);
      const second = run();
      expect([first.n, second.n]).toEqual([1, 1]);
      // The stripper (a WebAssembly build of swc) holds about 17 MiB once loaded; the cached start never loads it.
      expect(first.rss - second.rss).toBeGreaterThan(8 * 1024 * 1024);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
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
    const missing = [...used].filter(([name]) => !(name in manifest.dependencies)).map(([name, { file }]) => `${name} (imported by ${file})`);
    expect(missing, 'packages a production install lacks').toEqual([]);
  });

  it('loads the heavy packages a server may never use at their first use, not at start', () => {
    // Each holds 10–45 MiB once loaded (bench/README.md, issue 23); a start loads what its static imports reach.
    const atStart = runtimePackages(['server/main.ts', 'server/worker-main.ts'], true);
    const heavy = ['oidc-provider', 'stripe', 'nodemailer', '@modelcontextprotocol/sdk', '@simplewebauthn/server', 'music-metadata', 'pg', '@aws-sdk/client-s3', '@aws-sdk/lib-storage'];
    // config.ts checks SMTP_FROM with nodemailer's address parser, one file of its own, not the package's whole.
    const light = new Set(['nodemailer/lib/addressparser']);
    const loaded = [...atStart].filter(([name, { specifiers }]) => heavy.includes(name) && specifiers.some((specifier) => !light.has(specifier)));
    expect(loaded.map(([name, { file }]) => `${name} (imported by ${file})`)).toEqual([]);
    // The walk reaches the server for real, and those packages are still used, on first use.
    expect([...atStart.keys()]).toEqual(expect.arrayContaining(['express', 'express-openapi-validator']));
    expect([...runtimePackages(['server/main.ts']).keys()]).toEqual(expect.arrayContaining(heavy));
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
