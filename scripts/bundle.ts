/**
 * Bundles the split spec (openapi/openapi.yaml) into one JSON document with
 * Redocly, and adds the request samples (code-samples.ts) and the section on
 * the runnable workflows (workflows-docs.ts) to it. Both
 * `npm run bundle` and `npm run generate` make generated/openapi.json here,
 * so either leaves it the same.
 *
 *   tsx scripts/bundle.ts [OUT]    OUT defaults to generated/openapi.json
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { addCodeSamples } from './code-samples.ts';
import { addWorkflowsSection, type ArazzoFile, workflowFiles } from './workflows-docs.ts';

const root = resolve(import.meta.dirname, '..');

/** Runs Redocly quietly: its banners (Node.js end of life, Redoc 3) are shown only when the command fails. */
export function redocly(args: string[]): void {
  try {
    execFileSync(join(root, 'node_modules/.bin/redocly'), args, {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', REDOCLY_TELEMETRY: 'off' },
    });
  } catch (error) {
    const failed = error as { stdout?: Buffer; stderr?: Buffer };
    process.stderr.write(failed.stdout ?? '');
    process.stderr.write(failed.stderr ?? '');
    throw error;
  }
}

/** Writes the bundled spec, samples included, to `outFile`, and answers it. */
export function bundleSpec(outFile: string): Record<string, unknown> {
  redocly(['bundle', 'openapi/openapi.yaml', '--output', outFile]);
  const spec = JSON.parse(readFileSync(outFile, 'utf8')) as Record<string, unknown>;
  addCodeSamples(spec);
  addWorkflowsSection(spec, readWorkflows());
  // As Redocly writes it: two spaces, no newline at the end.
  writeFileSync(outFile, JSON.stringify(spec, null, 2));
  return spec;
}

/** The Arazzo files of openapi/workflows/, read as JSON: Redocly bundles Arazzo as it does OpenAPI, and reads its YAML. */
export function readWorkflows(): ArazzoFile[] {
  const folder = mkdtempSync(join(tmpdir(), 'workflows-'));
  try {
    return workflowFiles(root).map((path) => {
      const out = join(folder, `${basename(path)}.json`);
      redocly(['bundle', path, '--output', out]);
      return { path, document: JSON.parse(readFileSync(out, 'utf8')) };
    });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  bundleSpec(resolve(process.argv[2] ?? join(root, 'generated/openapi.json')));
}
