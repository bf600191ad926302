/**
 * The requests tools/call relays (mcp-relay.ts), without a database: every
 * path argument that is a dot-segment, holds a delimiter or a control
 * character is refused for every tool; a header argument with CR, LF or NUL
 * is refused; a malformed tools/call is told what is wrong.
 *
 * And a property, against an independent judge: random strings as path
 * arguments are either refused, or the request, sent by fetch over loopback,
 * reaches exactly the tool's operation with exactly those arguments, as
 * routed by Express on a stub that has a route for every operation of the
 * spec (literal segments before placeholders, without regard to case, as
 * the API routes).
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_BASE, buildRelayedRequest, readToolCall } from './mcp-relay.ts';
import { apiRoutes, apiTools, type ApiTool } from './mcp-tools.ts';

const tools = apiTools();
const routes = apiRoutes();
const pathNames = (tool: ApiTool) => tool.parameters.filter((parameter) => parameter.in === 'path').map((parameter) => parameter.name);
const withPath = tools.filter((tool) => pathNames(tool).length > 0);
const tool = (name: string) => tools.find((candidate) => candidate.name === name)!;
const origin = 'http://127.0.0.1:8080';
const idsOf = (candidate: ApiTool, value = 'abc_0123456789') => Object.fromEntries(pathNames(candidate).map((name) => [name, value]));
const build = (candidate: ApiTool, args: Record<string, unknown>) => buildRelayedRequest(candidate, args, origin);

describe('The requests MCP tools relay', () => {
  it('covers the tools with path parameters (there are dozens)', () => {
    expect(withPath.length).toBeGreaterThan(30);
    expect(withPath.map((candidate) => candidate.name)).toContain('deleteComment');
  });

  it('refuses, for every tool and each of its path parameters, a dot-segment, a delimiter or a control character, naming what to fix', () => {
    const refusedValues = ['.', '..', '%2e', '%2e%2e', '%2E.', '.%2E', 'a/b', '/', 'a\\b', 'a?b', 'a#b', '', 'a\nb', 'a\rb', '\u0000', '\u007f', '\u0085', '\ud800'];
    for (const candidate of withPath) {
      for (const name of pathNames(candidate)) {
        for (const value of refusedValues) {
          const built = build(candidate, { ...idsOf(candidate), [name]: value });
          expect(built.request, `${candidate.name} ${name}=${JSON.stringify(value)}`).toBeUndefined();
          expect(built.refused).toContain(name);
        }
      }
    }
    expect(build(tool('deleteComment'), { projectid: 'p', fileid: 'f', commentid: '..' }).refused).toMatch(/commentid cannot be "\.\.": a path segment "\." or "\.\." \(RFC 3986 §3\.3 dot-segments\)/);
  });

  it('fills every template with the ids, percent-encoded, and nothing else', () => {
    for (const candidate of withPath) {
      const { request } = build(candidate, idsOf(candidate));
      expect(request?.method).toBe(candidate.method);
      expect(request?.url.href).toBe(`${origin}${API_BASE}${candidate.path.replace(/\{[^}]+\}/g, 'abc_0123456789')}`);
    }
    const invited = build(tool('inviteCollaborator'), { playerid: 'ply_1', email: 'a b+c@example.org' });
    expect(invited.request?.url.pathname).toBe(`${API_BASE}/players/ply_1/collaborators/a%20b%2Bc%40example.org`);
    // "..." is no dot-segment (RFC 3986 §3.3 has "." and ".." only): it is an id like another, and stays one segment.
    expect(build(tool('getProject'), { projectid: '...' }).request?.url.pathname).toBe(`${API_BASE}/projects/...`);
  });

  it("refuses a path argument that another operation's literal segment would take (getComment's commentid export is exportComments)", () => {
    expect(build(tool('getComment'), { projectid: 'p', fileid: 'f', commentid: 'export' }).refused).toContain('exportComments');
    // The API matches paths case-sensitively (RFC 3986 §6.2.2.1): EXPORT is a comment id, getComment's own.
    for (const commentid of ['EXPORT', 'Export']) expect(build(tool('getComment'), { projectid: 'p', fileid: 'f', commentid }).request?.url.pathname).toBe(`${API_BASE}/projects/p/files/f/comments/${commentid}`);
    expect(build(tool('exportComments'), { projectid: 'p', fileid: 'f' }).request?.url.pathname).toBe(`${API_BASE}/projects/p/files/f/comments/export`);
    // The path is matched before the method (route.ts): POST .../comments/export is that path's 405, never updateComment.
    expect(build(tool('updateComment'), { projectid: 'p', fileid: 'f', commentid: 'export' }).refused).toContain('no operation of the API');
  });

  it('refuses a header argument with CR, LF or NUL, or with what is no field value, and sends a good one as given', () => {
    const createFolder = tool('createFolder');
    for (const key of ['k\r\nx-injected: 1', 'k\nx', 'k\rx', 'k\u0000', 'k\u20ac']) {
      const built = build(createFolder, { projectid: 'p', 'Idempotency-Key': key, body: { name: 'F' } });
      expect(built.request, JSON.stringify(key)).toBeUndefined();
      expect(built.refused).toContain('Idempotency-Key');
    }
    expect(build(createFolder, { projectid: 'p', 'Idempotency-Key': 'k\r\nx' }).refused).toMatch(/cannot hold CR, LF or NUL \(RFC 9110 §5\.5/);
    const built = build(createFolder, { projectid: 'p', 'Idempotency-Key': 'key-1', body: { name: 'F' } });
    expect(built.request?.headers).toEqual({ 'idempotency-key': 'key-1' });
    expect(built.request?.body).toBe('{"name":"F"}');
  });

  it('encodes query arguments with URLSearchParams: delimiters stay inside their value', () => {
    const { request } = build(tool('listInboxComments'), { status: 'open&status=resolved#x' });
    expect(request?.url.searchParams.getAll('status')).toEqual(['open&status=resolved#x']);
    expect(request?.url.hash).toBe('');
  });

  it('tells a malformed tools/call what is wrong: no params, arguments that are no object, no name, an unknown tool', () => {
    expect(readToolCall(undefined, tools).invalid).toMatch(/^tools\/call needs params, .* this one had none\.$/);
    expect(readToolCall([], tools).invalid).toContain('this one had an array');
    expect(readToolCall({ arguments: {} }, tools).invalid).toContain('needs params.name');
    for (const [value, kind] of [['x', 'a string'], [[], 'an array'], [null, 'null'], [1, 'a number']] as const) {
      expect(readToolCall({ name: 'listProjects', arguments: value }, tools).invalid).toContain(`params.arguments is an object of the tool's arguments by name, such as {"name": "listProjects", "arguments": {}}; this one was ${kind}`);
    }
    expect(readToolCall({ name: 'noSuchOperation' }, tools).invalid).toBe('There is no tool noSuchOperation for this token. tools/list names those it may call.');
    expect(readToolCall({ name: 'listProjects' }, tools)).toEqual({ tool: tool('listProjects'), args: {} });
  });
});

describe('Random path arguments, judged by Express routing every operation of the spec', () => {
  let stub: Server;
  let stubOrigin = '';

  beforeAll(async () => {
    const app = express();
    // As the API matches (http/route.ts): case-sensitively (RFC 3986 §6.2.2.1), with no trailing slash.
    app.set('case sensitive routing', true);
    app.set('strict routing', true);
    const segmentsOf = (path: string) => path.split('/');
    const isPlaceholder = (segment: string) => /^\{[^}]+\}$/.test(segment);
    // OpenAPI, Paths Object: "concrete (non-templated) paths would be matched before their templated counterparts".
    const ordered = [...routes].sort((a, b) => {
      const [left, right] = [segmentsOf(a.path), segmentsOf(b.path)];
      for (let index = 0; index < Math.min(left.length, right.length); index += 1) {
        if (isPlaceholder(left[index]) !== isPlaceholder(right[index])) return isPlaceholder(left[index]) ? 1 : -1;
      }
      return 0;
    });
    for (const route of ordered) {
      const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete' | 'patch';
      if (!['get', 'post', 'put', 'delete', 'patch'].includes(method)) continue;
      app[method](`${API_BASE}${route.path.replace(/\{([^}]+)\}/g, ':$1')}`, (req, res) => {
        res.json({ operationId: route.operationId, params: req.params });
      });
    }
    app.use((req, res) => {
      res.status(404).json({ operationId: null, path: req.originalUrl });
    });
    stub = await new Promise<Server>((ready) => {
      const listening = app.listen(0, '127.0.0.1', () => ready(listening));
    });
    stubOrigin = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((closed) => stub?.close(closed));
  });

  it('are refused, or reach exactly the tool’s operation with exactly those arguments', async () => {
    const literals = [...new Set(routes.flatMap((route) => route.path.split('/')).filter((segment) => segment && !segment.startsWith('{')))];
    const tricky = ['.', '..', '%', '2', 'e', 'E', '%2e', '/', '\\', '?', '#', ';', '@', '+', ' ', 'a', '\t', '\n', '\u0085', '\ud800', '\udc00', 'é', '😀', ...literals];
    /** The literal segments other operations of the method have where this tool's path has {name}: the values a router would give to them. */
    const neighbours = (candidate: ApiTool, name: string) => {
      const own = candidate.path.split('/');
      const at = own.indexOf(`{${name}}`);
      return routes
        .filter((route) => route.method === candidate.method && route.path.split('/').length === own.length)
        .map((route) => route.path.split('/')[at])
        .filter((segment) => !segment.startsWith('{'));
    };
    const valueFor = (candidate: ApiTool, name: string) =>
      fc.oneof(
        fc.string({ unit: 'binary', maxLength: 12 }),
        fc.string({ unit: fc.constantFrom(...tricky), maxLength: 5 }),
        fc.constantFrom(...literals, ...literals.map((literal) => literal.toUpperCase())),
        ...(neighbours(candidate, name).length ? [fc.constantFrom(...neighbours(candidate, name).flatMap((literal) => [literal, literal.toUpperCase()]))] : []),
      );
    const calls = fc.constantFrom(...withPath).chain((candidate) =>
      fc.record(Object.fromEntries(pathNames(candidate).map((name) => [name, valueFor(candidate, name)]))).map((args) => ({ candidate, args })),
    );
    let reached = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(calls, async ({ candidate, args }) => {
        const built = buildRelayedRequest(candidate, args, stubOrigin);
        if (built.refused !== undefined) {
          refused += 1;
          expect(built.refused).toContain(candidate.name);
          return;
        }
        const response = await fetch(built.request.url, { method: built.request.method, headers: built.request.headers, body: built.request.body, redirect: 'manual' });
        expect(await response.json()).toEqual({ operationId: candidate.name, params: args });
        reached += 1;
      }),
      { numRuns: 1000 },
    );
    // Neither side is empty: the property judged requests that went out, and refusals.
    expect(reached).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(50);
  });
});
