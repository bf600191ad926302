/**
 * A production install (`npm ci --omit=dev && npm start`) has only the
 * dependencies of package.json. These tests fail when `npm start` would
 * reach for a devDependency: one run by the start script itself (as the docs
 * build with @redocly/cli once was), or one imported by the server's code.
 */
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docsPath } from '../server/app.ts';

const root = resolve(import.meta.dirname, '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
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
  it('runs npm start, npm run admin and npm run worker with tsx, a dependency, and no build step', () => {
    for (const script of ['start', 'admin', 'worker']) expect(manifest.scripts[script]).toMatch(/^tsx server\/[\w/-]+\.ts$/);
    expect(manifest.dependencies.tsx).toBeDefined();
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
});
