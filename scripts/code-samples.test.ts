/**
 * The docs' request samples (x-codeSamples, scripts/code-samples.ts): every
 * operation of the bundled spec has a curl and a TypeScript sample; every
 * curl sample, run by the shell exactly as written (only the API root
 * pointed at the mock), gets a success answer from the mock that conforms to
 * the spec; and every TypeScript sample type-checks against the generated
 * client, so a sample that sends a field the spec does not have fails here.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock, type RunningMock } from '../mock/mock-server.ts';
import { checkResponse, findRoute } from '../contract-tests/support/spec-validator.ts';
import { curlSample, SAMPLE_BASE_URL, SAMPLE_FILES, sampleRequest, type CodeSample } from './code-samples.ts';

const root = resolve(import.meta.dirname, '..');
const run = promisify(execFile);
type Spec = { paths: Record<string, Record<string, { operationId: string; 'x-codeSamples'?: CodeSample[] } | undefined>> };
const spec = JSON.parse(readFileSync(join(root, 'generated/openapi.json'), 'utf8')) as Spec;
const METHODS = ['get', 'post', 'put', 'delete', 'patch'] as const;
const operations = Object.entries(spec.paths).flatMap(([template, item]) =>
  METHODS.filter((method) => item[method]).map((method) => ({ template, method, operation: item[method]! })),
);

describe('request samples in the docs', () => {
  it('gives every operation a curl and a TypeScript sample', () => {
    expect(operations.length).toBeGreaterThanOrEqual(45);
    for (const { operation } of operations) {
      const samples = operation['x-codeSamples'] ?? [];
      expect(samples.map((sample) => sample.label), operation.operationId).toEqual(['curl', 'TypeScript (generated client)']);
      expect(samples[0].source, operation.operationId).toMatch(/^curl -sS -X [A-Z]+ 'http:\/\/localhost:8080\/api\/v1\//);
      expect(samples[1].source, operation.operationId).toContain("from './generated/client.ts'");
    }
  });

  it('refuses to make a sample for a required parameter without an example, naming it', () => {
    const broken = structuredClone(spec) as unknown as { paths: Record<string, Record<string, { parameters?: unknown[] }>> };
    broken.paths['/players'].get.parameters = [{ name: 'since', in: 'query', required: true, schema: { type: 'integer' } }];
    expect(() => sampleRequest(broken as never, '/players', 'get')).toThrow('listPlayers: the query parameter since has no example to make a sample from');
  });

  describe('each curl sample, run against the mock', () => {
    let mock: RunningMock;
    let folder: string;
    beforeAll(async () => {
      mock = await startMock({ port: 0, host: '127.0.0.1' });
      // The files the upload samples send (--data-binary @mix.wav), in the folder the samples run in.
      folder = mkdtempSync(join(tmpdir(), 'code-samples-'));
      for (const name of Object.values(SAMPLE_FILES)) writeFileSync(join(folder, name), Buffer.from('RIFF\0\0\0\0WAVE'));
    });
    afterAll(async () => {
      await mock?.stop();
      rmSync(folder, { recursive: true, force: true });
    });

    it.each(operations.map(({ template, method, operation }) => [operation.operationId, template, method] as const))('%s', async (operationId, template, method) => {
      const documented = spec.paths[template][method]!['x-codeSamples']![0].source;
      // What the docs show, with only the API root changed (checked, so the sample cannot drift from what runs here).
      const sample = curlSample(sampleRequest(spec as never, template, method), mock.apiUrl);
      expect(sample.split(mock.apiUrl).join(SAMPLE_BASE_URL).split(new URL(mock.apiUrl).origin).join(new URL(SAMPLE_BASE_URL).origin)).toBe(documented);
      const { stdout } = await run('bash', ['-c', `${sample} -o answer -w '%{http_code} %{content_type}'`], { cwd: folder, env: { ...process.env, TOKEN: 'a-partner-token', SESSION: 'a-session-secret' } });
      const [status, contentType] = stdout.split(' ');
      const body = readFileSync(join(folder, 'answer'), 'utf8');
      expect(Number(status), `${operationId} answered ${status}: ${body}`).toBeGreaterThanOrEqual(200);
      expect(Number(status), `${operationId} answered ${status}: ${body}`).toBeLessThan(300);
      const json = contentType?.includes('json') && body ? JSON.parse(body) : undefined;
      const route = findRoute(method, template.replace(/\{[^}]+\}/g, 'x'))!;
      expect(checkResponse(route, Number(status), contentType || null, json), operationId).toEqual([]);
    });
  });

  it('type-checks every TypeScript sample against the generated client', { timeout: 120_000 }, async () => {
    // Beside generated/, so that the samples' import of './generated/client.ts' is the real client.
    const folder = join(root, `.code-samples-${process.pid}`);
    mkdirSync(folder, { recursive: true });
    try {
      for (const { operation } of operations) {
        const source = operation['x-codeSamples']![1].source.replace("from './generated/client.ts'", "from '../generated/client.ts'");
        writeFileSync(join(folder, `${operation.operationId}.ts`), `${source}\nexport { data, error };\n`);
      }
      writeFileSync(join(folder, 'tsconfig.json'), JSON.stringify({ extends: '../tsconfig.json', include: ['*.ts'] }));
      const checked = await run(join(root, 'node_modules/.bin/tsc'), ['-p', folder], { cwd: root }).then(
        () => '',
        (error: { stdout?: string }) => error.stdout ?? String(error),
      );
      expect(checked).toBe('');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
