/**
 * The compile errors a partner sees from the generated client
 * (generated/client.ts, rendered by client-template.ts) for a misspelt field:
 * compiled here with the TypeScript compiler and the repository's tsconfig,
 * so that an upgrade of openapi-fetch or TypeScript that loses the excess
 * property check, or buries it in a page of types, fails a test.
 * contract-tests/client-types.test-d.ts proves which calls compile; this
 * proves what the error says.
 */
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');

/** Each case is one line of a partner's code, the error it should get, and the line spelt right. */
const cases = [
  {
    line: `await api.POST('/players', { body: { name: 'x', colour: '#fff' } });`,
    field: 'colour',
    says: /'colour' does not exist in type '\{ name: string;/,
    right: `await api.POST('/players', { body: { name: 'x' } });`,
  },
  {
    line: `await api.POST('/projects', { body: { name: 'x', colr: '#ffffff' } });`,
    field: 'colr',
    says: /'colr' does not exist in type .* Did you mean to write 'color'\?$/,
    right: `await api.POST('/projects', { body: { name: 'x', color: '#ffffff' } });`,
  },
  {
    line: `await api.POST('/players', { body: { name: 'x', options: { qualty: 'original' } } });`,
    field: 'qualty',
    says: /'qualty' does not exist in type '\{ quality\?: .* Did you mean to write 'quality'\?$/,
    right: `await api.POST('/players', { body: { name: 'x', options: { quality: 'original' } } });`,
  },
  {
    line: `await api.uploadFile('prj_1', { name: 'a.wav', mimetype: 'audio/wav' }, new Uint8Array(1));`,
    field: 'mimetype',
    says: /^Object literal may only specify known properties, but 'mimetype' does not exist in type 'UploadFileRequest'\. Did you mean to write 'mimeType'\?$/,
    right: `await api.uploadFile('prj_1', { name: 'a.wav', mimeType: 'audio/wav' }, new Uint8Array(1));`,
  },
];

/** Compiles `body` as a module of contract-tests/ (next to the client's other users); returns its diagnostics. */
function compile(body: string): readonly ts.Diagnostic[] {
  const file = join(root, 'contract-tests', 'partner-snippet.ts');
  const source = `import { createApiClient } from '../generated/client.ts';\nconst api = createApiClient({ baseUrl: 'http://localhost:8080/api/v1' });\nexport async function partner() {\n${body}\n}\n`;
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (!config) throw new Error('tsconfig.json did not parse');
  const host = ts.createCompilerHost(config.options);
  const { getSourceFile, fileExists } = host;
  host.fileExists = (name) => name === file || fileExists(name);
  host.getSourceFile = (name, language, ...rest) => (name === file ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, ...rest));
  const program = ts.createProgram([file], config.options, host);
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(file));
}

describe('the generated client\'s compile errors', () => {
  it('name a misspelt field, top-level or nested, at the field, in one readable line', () => {
    const diagnostics = compile(cases.map((c) => `  ${c.line}`).join('\n'));
    expect(diagnostics).toHaveLength(cases.length);
    for (const [index, c] of cases.entries()) {
      const diagnostic = diagnostics.find((d) => d.file!.getLineAndCharacterOfPosition(d.start!).line === 3 + index);
      expect(diagnostic, c.line).toBeDefined();
      // TS2353 / TS2561: "Object literal may only specify known properties".
      expect([2353, 2561]).toContain(diagnostic!.code);
      // The error is on the misspelt field itself, not on the whole call.
      expect(diagnostic!.file!.text.slice(diagnostic!.start!, diagnostic!.start! + diagnostic!.length!)).toBe(c.field);
      // One line, no chain of "is not assignable to" through openapi-fetch's types.
      const message = ts.flattenDiagnosticMessageText(diagnostic!.messageText, '\n');
      expect(message).not.toContain('\n');
      expect(message).toMatch(c.says);
      expect(message.length).toBeLessThan(600);
    }
  });

  it('compile the same calls spelt right', () => {
    expect(compile(cases.map((c) => `  ${c.right}`).join('\n')).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
  });
});
