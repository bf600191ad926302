/**
 * A tools/call can reach its own operation only, on a real server on SQLite
 * and PostgreSQL, through the SDK's client with a personal token:
 * - for every tool with a path parameter, `.`, `..`, `%2e%2e` and `a/b` in
 *   each path argument are refused as tool errors naming the argument,
 *   nothing is relayed to the API and nothing changes (deleteComment with
 *   commentid `..` used to delete the whole file);
 * - a header argument with CR/LF is refused the same way, and nothing is
 *   logged as an error;
 * - a tools/call without params, with arguments that are no object, without
 *   a name or naming no tool is answered -32602 Invalid params, not -32603.
 * What reaches the API is seen by watching fetch for requests that carry the
 * relay's mark (internal-relay.ts): the server runs in this process.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RELAY_HEADER } from '../../http/internal-relay.ts';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';
import { apiTools } from './mcp-tools.ts';

type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }> };
const text = (result: unknown) => (result as ToolResult).content[0].text;
const pathNames = (name: string) => apiTools().find((tool) => tool.name === name)!.parameters.filter((parameter) => parameter.in === 'path').map((parameter) => parameter.name);

describe.each(backends)('MCP tool arguments on %s', (backend) => {
  const t = useTestServer(backend);
  let token = '';
  let mcp: Client;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const owner = await t.as(`mcp-arguments-${backend}@example.org`);
    token = owner.token;
    const { data: project } = await owner.api.POST('/projects', { body: { name: 'Arguments' } });
    const { data: uploaded } = await owner.api.uploadFile(project!.id, { name: 'mix.wav', mimeType: 'audio/wav' }, new TextEncoder().encode('RIFF bytes of a mix'));
    const fileid = uploaded!.upload.boxid;
    const { data: comment } = await owner.api.POST('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid: project!.id, fileid } }, body: { message: 'Keep the intro' } });
    const { data: player } = await owner.api.POST('/players', { body: { name: 'For the band', projectid: project!.id } });
    Object.assign(ids, { projectid: project!.id, fileid, commentid: comment!.id, playerid: player!.id });
    mcp = new Client({ name: 'arguments-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${t.server.address}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  });
  afterAll(async () => {
    await mcp?.close();
  });

  /** Calls fetch makes with the relay's mark: the requests tools/call sent to the API. */
  function watchRelays() {
    const spy = vi.spyOn(globalThis, 'fetch');
    const relayed = () => spy.mock.calls.filter(([, init]) => Object.keys((init?.headers ?? {}) as Record<string, string>).includes(RELAY_HEADER));
    return { relayed, stop: () => spy.mockRestore() };
  }
  /** What the person has, read through the API: files, comments, players and projects. */
  async function everything() {
    const read = async (path: string) => {
      const response = await t.fetch(path, { token });
      expect(response.status, path).toBe(200);
      return response.json();
    };
    return {
      files: await read(`/projects/${ids.projectid}/all`),
      comments: await read(`/projects/${ids.projectid}/files/${ids.fileid}/comments`),
      players: await read('/players'),
      projects: await read('/projects'),
    };
  }
  const argumentsOf = (name: string, bad: Record<string, string> = {}) =>
    Object.fromEntries(pathNames(name).map((parameter) => [parameter, bad[parameter] ?? ids[parameter] ?? (parameter === 'email' ? 'someone@example.org' : 'abc_0123456789')]));

  it('refuses ".", "..", "%2e%2e" and "a/b" in every path argument of every tool, relays nothing, and changes nothing', async () => {
    const before = await everything();
    const { tools } = await mcp.listTools();
    const withPath = tools.map((tool) => tool.name).filter((name) => pathNames(name).length > 0);
    expect(withPath.length).toBeGreaterThan(30);
    const relays = watchRelays();
    try {
      for (const name of withPath) {
        for (const parameter of pathNames(name)) {
          for (const value of ['.', '..', '%2e%2e', 'a/b']) {
            const result = await mcp.callTool({ name, arguments: argumentsOf(name, { [parameter]: value }) });
            expect(result.isError, `${name} ${parameter}=${value}: ${text(result)}`).toBe(true);
            expect(text(result)).toContain(`${name}'s ${parameter} cannot`);
          }
        }
      }
      expect(relays.relayed()).toEqual([]);
      // The tools do reach the API with good arguments, and the watch sees it.
      const read = await mcp.callTool({ name: 'getComment', arguments: argumentsOf('getComment') });
      expect(read.isError, text(read)).toBeFalsy();
      expect(relays.relayed()).toHaveLength(1);
    } finally {
      relays.stop();
    }
    expect(await everything()).toEqual(before);
  });

  it('keeps the file and the comment after deleteComment with commentid ".." (which used to delete the file), and deletes the comment given its id', async () => {
    const refused = await mcp.callTool({ name: 'deleteComment', arguments: { ...argumentsOf('deleteComment'), commentid: '..' } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('deleteComment\'s commentid cannot be "..": a path segment "." or ".." (RFC 3986 §3.3 dot-segments)');
    const fileAt = `/projects/${ids.projectid}/files/${ids.fileid}`;
    expect((await t.fetch(fileAt, { token })).status).toBe(200);
    expect((await t.fetch(`${fileAt}/comments/${ids.commentid}`, { token })).status).toBe(200);

    const deleted = await mcp.callTool({ name: 'deleteComment', arguments: argumentsOf('deleteComment') });
    expect(deleted.isError, text(deleted)).toBeFalsy();
    expect((await t.fetch(`${fileAt}/comments/${ids.commentid}`, { token })).status).toBe(404);
    expect((await t.fetch(fileAt, { token })).status).toBe(200);
  });

  it('refuses a header argument with CR/LF as a tool error naming it, relays nothing and logs no error', async () => {
    const logged = { error: vi.spyOn(t.server.ctx.logger, 'error'), warn: vi.spyOn(t.server.ctx.logger, 'warn') };
    const relays = watchRelays();
    const folders = await (await t.fetch(`/projects/${ids.projectid}/folders`, { token })).json();
    try {
      const result = await mcp.callTool({ name: 'createFolder', arguments: { projectid: ids.projectid, 'Idempotency-Key': 'key\r\nx-injected: 1', body: { name: 'Injected' } } });
      expect(result.isError).toBe(true);
      expect(text(result)).toContain("createFolder's Idempotency-Key cannot hold CR, LF or NUL (RFC 9110 §5.5");
      expect(relays.relayed()).toEqual([]);
      expect(logged.error).not.toHaveBeenCalled();
      expect(logged.warn).not.toHaveBeenCalled();
    } finally {
      relays.stop();
      logged.error.mockRestore();
      logged.warn.mockRestore();
    }
    expect(await (await t.fetch(`/projects/${ids.projectid}/folders`, { token })).json()).toEqual(folders);
  });

  it('answers a malformed tools/call, or one naming no tool, with -32602 Invalid params saying what is wrong', async () => {
    const logged = vi.spyOn(t.server.ctx.logger, 'error');
    const post = async (message: Record<string, unknown>) => {
      const response = await fetch(`${t.server.address}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...message }),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as { error?: { code: number; message: string }; result?: unknown };
    };
    try {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ method: 'tools/call' }, 'tools/call needs params, an object naming the tool and holding its arguments'],
        [{ method: 'tools/call', params: { arguments: {} } }, 'tools/call needs params.name'],
        [{ method: 'tools/call', params: { name: 'listProjects', arguments: 'all' } }, "params.arguments is an object of the tool's arguments by name"],
        [{ method: 'tools/call', params: { name: 'listProjects', arguments: [] } }, 'this one was an array'],
        [{ method: 'tools/call', params: { name: 'listProjects', arguments: null } }, 'this one was null'],
        [{ method: 'tools/call', params: { name: 'noSuchOperation', arguments: {} } }, 'There is no tool noSuchOperation for this token'],
      ];
      for (const [message, says] of cases) {
        const answer = await post(message);
        expect(answer.error?.code, JSON.stringify(message)).toBe(-32602);
        expect(answer.error?.message).toContain(says);
      }
      // A well-formed call still works, and a method the server has not is still -32601.
      expect((await post({ method: 'tools/call', params: { name: 'listProjects', arguments: {} } })).result).toMatchObject({ content: [{ type: 'text' }] });
      expect((await post({ method: 'prompts/list' })).error?.code).toBe(-32601);
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
  });
});
