/**
 * The tools made from the spec: every input schema is JSON Schema 2020-12
 * that compiles (the refs it keeps resolve under its own $defs), the spec's
 * own request examples are valid tool input, and the operations a token
 * cannot drive are not tools.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { apiTools, toolAllowed } from './mcp-tools.ts';

type JsonObject = Record<string, unknown>;
const spec = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../../generated/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, { operationId?: string; security?: Array<Record<string, string[]>>; requestBody?: { content: Record<string, { example?: unknown; examples?: Record<string, { value: unknown }> }> } }>>;
};
const operations = Object.values(spec.paths).flatMap((item) => Object.entries(item).map(([method, operation]) => ({ method, ...operation })));

describe('MCP tools from the spec', () => {
  const tools = apiTools();

  it('makes one tool per operation a token can call, named by its operationId, and none for the others', () => {
    const names = tools.map((tool) => tool.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(['listProjects', 'createPlayer', 'listInboxComments', 'updatePlayer', 'deletePlayer', 'redeliverWebhook']));
    // Session-only (a token cannot manage tokens), anonymous, signed-URL and tus-protocol operations are no tools.
    for (const absent of ['createToken', 'listSessions', 'getAuthConfig', 'signIn', 'uploadFile', 'fetchSignedDownload', 'createProjectUpload', 'getProjectUploadOffset', 'appendProjectUpload', 'cancelProjectUpload', 'createPortalUpload']) {
      expect(names).not.toContain(absent);
    }
    const tokenOperations = operations.filter((operation) => operation.security?.some((requirement) => 'bearerAuth' in requirement));
    expect(tools.length).toBe(tokenOperations.length - 4);
  });

  it('gives every tool an input schema that compiles as JSON Schema 2020-12', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    formats.default(ajv);
    for (const tool of tools) {
      expect(tool.description.length, tool.name).toBeGreaterThan(20);
      expect(() => ajv.compile(tool.inputSchema), tool.name).not.toThrow();
    }
  });

  it("takes the spec's own request examples under `body`, and refuses what the operation refuses", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    formats.default(ajv);
    let checked = 0;
    for (const tool of tools.filter((candidate) => candidate.hasBody)) {
      const operation = operations.find((candidate) => candidate.operationId === tool.name)!;
      const validate = ajv.compile(tool.inputSchema);
      const pathArguments = Object.fromEntries(tool.parameters.filter((parameter) => parameter.in === 'path').map((parameter) => [parameter.name, 'abc_0123456789']));
      const media = operation.requestBody?.content['application/json'];
      const examples = [...Object.values(media?.examples ?? {}).map((example) => example.value), ...(media && 'example' in media ? [media.example] : [])];
      for (const example of examples) {
        const input = { ...pathArguments, body: example };
        expect(validate(input), `${tool.name}: ${JSON.stringify(validate.errors)}`).toBe(true);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(10);
    const createPlayer = ajv.compile(tools.find((tool) => tool.name === 'createPlayer')!.inputSchema as JsonObject);
    expect(createPlayer({ body: { projectid: 'prj_1' } })).toBe(false);
    expect(createPlayer({ body: { name: 'x' }, extra: 1 })).toBe(false);
  });

  it('lets a token call the tools of its scopes, and a personal token with every scope all of them', () => {
    const createPlayer = tools.find((tool) => tool.name === 'createPlayer')!;
    expect(createPlayer.scope).toBe('players:write');
    expect(toolAllowed(createPlayer, ['players:read'])).toBe(false);
    expect(toolAllowed(createPlayer, ['players:write'])).toBe(true);
    expect(toolAllowed(createPlayer, 'all')).toBe(true);
  });
});
