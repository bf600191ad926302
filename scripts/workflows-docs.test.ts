/**
 * The workflows' section of the docs (workflows-docs.ts), and the rules the
 * workflow files keep: each is linted with the spec, takes the bearer token
 * as `token`, and calls the API under the source name the run command
 * overrides (`api`).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readWorkflows } from './bundle.ts';
import { type ArazzoFile, operationsOf, runCommand, workflowFiles, workflowsSection } from './workflows-docs.ts';

const root = resolve(import.meta.dirname, '..');
const spec = JSON.parse(readFileSync(resolve(root, 'generated/openapi.json'), 'utf8')) as Record<string, unknown>;
const operations = operationsOf(spec);

/** A workflow file as the section reads it, with what a test changes. */
function fileWith(steps: unknown[], inputs: Record<string, unknown> = { type: 'object', required: ['token'], properties: { token: { type: 'string' } } }): ArazzoFile {
  return {
    path: 'openapi/workflows/example.arazzo.yaml',
    document: { arazzo: '1.0.1', info: { title: 'Example' }, workflows: [{ workflowId: 'example', summary: 'An example', inputs, steps }] as unknown as ArazzoFile['document']['workflows'] },
  };
}

describe('the runnable workflows', () => {
  const files = readWorkflows();

  it('are the Arazzo files of openapi/workflows/, each linted by `npm run lint:spec` (an API of redocly.yaml)', () => {
    expect(files.map((file) => file.path)).toEqual(workflowFiles(root));
    expect(files.length).toBeGreaterThanOrEqual(3);
    const roots = [...readFileSync(resolve(root, 'redocly.yaml'), 'utf8').matchAll(/^\s+root: (\S+)$/gm)].map(([, path]) => path);
    for (const file of files) expect(roots).toContain(file.path);
  });

  it('each take the bearer token as the input `token`, and call the API under the source name `api`', () => {
    for (const file of files) {
      const document = file.document as ArazzoFile['document'] & { sourceDescriptions: Array<{ name: string; url: string }> };
      expect(document.arazzo, file.path).toMatch(/^1\.0\./);
      expect(document.sourceDescriptions, file.path).toEqual([{ name: 'api', url: '../openapi.yaml', type: 'openapi' }]);
      for (const workflow of document.workflows) {
        expect(workflow.inputs?.required, `${file.path} ${workflow.workflowId}`).toContain('token');
        expect(workflow.inputs?.properties?.token, `${file.path} ${workflow.workflowId}`).toMatchObject({ type: 'string', format: 'password' });
      }
    }
  });
});

describe('the docs section of the workflows', () => {
  it("lists each step with a link to its operation's place on the docs page, its method and path", () => {
    const section = workflowsSection([fileWith([{ stepId: 'makeIt', operationId: 'createProject', description: 'Make a\n  project.', successCriteria: [{ condition: '$statusCode == 200' }] }])], operations);
    expect(section).toContain('## Runnable workflows');
    expect(section).toContain('### An example');
    expect(section).toContain('1. **makeIt**: [Create a project](#/projects/createproject) (`POST /projects`). Make a project.\n   - Succeeds when `$statusCode == 200`.');
    expect(section).toContain('- `token` (required)');
  });

  it('says how a step waits (retries) and when it ends the workflow, and names the URL an x-operation step calls', () => {
    const section = workflowsSection(
      [
        fileWith([
          { stepId: 'put', 'x-operation': { url: '$steps.ask.outputs.url', method: 'put' } },
          {
            stepId: 'poll',
            operationId: 'getFile',
            onFailure: [
              { name: 'failed', type: 'end', criteria: [{ condition: "$response.body#/status == 'failed'" }] },
              { name: 'again', type: 'retry', retryAfter: 0.2, retryLimit: 150 },
            ],
          },
        ]),
      ],
      operations,
    );
    expect(section).toContain('1. **put**: `PUT` to the URL `$steps.ask.outputs.url`.');
    expect(section).toContain("   - Ends the workflow, failed, when `$response.body#/status == 'failed'`.");
    expect(section).toContain('   - Otherwise asked again, every 0.2 s, at most 150 times.');
  });

  it('refuses a step whose operation the spec does not have, naming the file and the step', () => {
    expect(() => workflowsSection([fileWith([{ stepId: 'typo', operationId: 'createProjekt' }])], operations)).toThrow(/example\.arazzo\.yaml: step typo calls createProjekt/);
  });

  it('gives the command that runs a file, with a placeholder for every required input', () => {
    const file = fileWith([], { type: 'object', required: ['token', 'projectid'], properties: {} });
    expect(runCommand(file)).toBe(
      'npx redocly respect openapi/workflows/example.arazzo.yaml \\\n  --input token=$TOKEN \\\n  --input projectid=<projectid> \\\n  --server api=http://localhost:8080/api/v1',
    );
  });

  it('is at the end of the introduction of the committed bundle, for every workflow file', () => {
    const description = (spec.info as { description: string }).description;
    const section = description.slice(description.indexOf('## Runnable workflows'));
    for (const path of workflowFiles(root)) expect(section).toContain(`npx redocly respect ${path}`);
  });
});
