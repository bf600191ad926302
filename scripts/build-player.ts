/**
 * Bundles the player page's TypeScript (web/player/) and stylesheet into
 * generated/player/: player.js, player.css and the licences of the libraries
 * inside them. scripts/generate.ts calls it with the rest of generated/, so
 * the bundle is committed and checked for staleness like the docs: a
 * production install (`npm ci --omit=dev && npm start`) serves it without
 * esbuild, and `npm start` on a fresh clone needs no build step.
 *
 * The build is deterministic (the same sources and locked tool versions give
 * the same bytes), which is what lets `generate.ts --check` compare.
 */
import { build } from 'esbuild';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');

export const PLAYER_BUNDLE_FILES = ['player.js', 'player.css', 'portal.js', 'portal.css', 'account.js', 'account.css', 'studio.js', 'studio.css', 'LICENSES.txt'] as const;

export async function buildPlayerBundle(outDir: string): Promise<void> {
  const result = await build({
    absWorkingDir: root,
    // The player page, the upload portal's page (web/portal/), the account pages (web/account/) and the studio
    // (web/studio/, Preact components: docs/decisions/studio-framework.md), which share its assets route and licences file.
    entryPoints: { player: 'web/player/main.ts', portal: 'web/portal/main.ts', account: 'web/account/main.ts', studio: 'web/studio/main.tsx' },
    outdir: outDir,
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    // What the page needs: Web Audio, ES modules, optional chaining. Every browser of the last four years has them.
    target: ['chrome100', 'firefox100', 'safari15'],
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'warning',
    sourcemap: false,
    metafile: true,
    // The studio's JSX, compiled to Preact's automatic runtime (as tsconfig.json says for the type check).
    jsx: 'automatic',
    jsxImportSource: 'preact',
  });
  // The libraries inside the bundle, with their licences, beside it (served at /assets/LICENSES.txt).
  // Peaks.js and waveform-data are LGPL-3.0: this repository is their corresponding source, and
  // `npm run generate` rebuilds the bundle with a changed copy of either.
  const packages = new Set<string>();
  for (const output of Object.values(result.metafile.outputs)) {
    for (const input of Object.keys(output.inputs)) {
      const match = /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
      if (match) packages.add(match[1]);
    }
  }
  writeFileSync(join(outDir, 'LICENSES.txt'), [...packages].sort().map(licenceOf).join('\n\n'));
}

function licenceOf(name: string): string {
  const dir = join(root, 'node_modules', name);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string; license?: string };
  const file = readdirSync(dir).find((entry) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(entry));
  const text = file ? readFileSync(join(dir, file), 'utf8').trim() : `Licence: ${manifest.license ?? 'see the package'}`;
  return `${'='.repeat(72)}\n${name} ${manifest.version} (${manifest.license ?? 'unknown'})\n${'='.repeat(72)}\n${text}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = join(root, 'generated/player');
  await buildPlayerBundle(out);
  console.log(`Player page bundled into ${out}.`);
}
