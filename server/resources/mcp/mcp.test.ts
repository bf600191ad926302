/**
 * The MCP server at /mcp, driven by the SDK's own client
 * (@modelcontextprotocol/sdk's Client and StreamableHTTPClientTransport)
 * with OAuth tokens got through the real flow (the consent page, answered
 * with the person's session), on both stores:
 * - without a token, 401 pointing at the RFC 9728 metadata, from which the
 *   SDK's own OAuth client finds the authorization server, registers,
 *   asks for resource=<PUBLIC_URL>/mcp, and lists every tool;
 * - with a token of three scopes: the tools listed are the operations of
 *   those scopes, a read tool and a write tool work (their effects read back
 *   through the API), a tool beyond the scopes is refused with 403;
 * - tokens are for one resource: the API's are refused here, this one's
 *   on the API.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as client from 'openid-client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { startTestServer, type TestServer } from '../../testing/test-server.ts';
import { signIn, type SignedIn } from '../../testing/sessions.ts';
import { consentByFetch, startCallback } from '../../testing/oauth-partner.ts';
import { appScopes } from '../oauth/oauth-scopes.ts';
import { scopeCovers } from '../../auth/scopes.ts';

interface SpecOperation {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
}
const spec = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../../generated/openapi.json'), 'utf8')) as { paths: Record<string, Record<string, SpecOperation>> };
/** Each operation's oauth2 scope, by operationId, read from the spec here (not from the code under test). */
const scopeOf = new Map<string, string>();
for (const item of Object.values(spec.paths)) {
  for (const operation of Object.values(item)) {
    const scope = operation.security?.find((requirement) => requirement.oauth2?.length)?.oauth2[0];
    if (operation.operationId && scope) scopeOf.set(operation.operationId, scope);
  }
}

const text = (result: unknown) => ((result as { content: Array<{ type: string; text: string }> }).content[0]).text;

describe.each(backends)('The MCP server on %s', (backend) => {
  let server: TestServer;
  let callback: Awaited<ReturnType<typeof startCallback>>;
  let person: SignedIn;
  let personalToken: string;
  const email = `mcp-${backend}@example.org`;
  const open: Array<{ close(): Promise<void> }> = [];

  beforeEach((context) => {
    (context.task.meta as { store?: string }).store = backend;
  });
  beforeAll(async () => {
    server = await startTestServer(backend, { OAUTH_DYNAMIC_REGISTRATION: 'true' });
    callback = await startCallback();
    person = await signIn(server, email);
    personalToken = await server.token(email);
  });
  afterAll(async () => {
    for (const connection of open) await connection.close();
    await callback?.stop();
    await server?.stop();
  });

  const issuer = () => new URL(server.address);
  const mcpUrl = () => new URL(`${server.address}/mcp`);
  const metadataUrl = () => `${server.address}/.well-known/oauth-protected-resource/mcp`;
  const insecure = { execute: [client.allowInsecureRequests], algorithm: 'oauth2' as const };
  const api = (token: string, path: string, init: RequestInit = {}) =>
    fetch(`${server.apiUrl}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers } });

  /** A token through the whole flow (registration, consent, exchange), for the MCP server unless `resource` says otherwise. */
  async function oauthGrant(scope: string, resource: string | null = mcpUrl().href): Promise<{ accessToken: string; appid: string }> {
    const config = await client.dynamicClientRegistration(
      issuer(),
      { client_name: 'An assistant', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none', application_type: 'native' },
      client.None(),
      insecure,
    );
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: callback.redirectUri,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      ...(resource ? { resource } : {}),
    });
    const back = await consentByFetch(url, person.cookie);
    const tokens = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state }, resource ? { resource } : undefined);
    return { accessToken: tokens.access_token, appid: config.clientMetadata().client_id };
  }
  const oauthToken = async (scope: string, resource: string | null = mcpUrl().href) => (await oauthGrant(scope, resource)).accessToken;

  /** The SDK's client, connected with a bearer token. */
  async function connect(token: string): Promise<Client> {
    const mcp = new Client({ name: 'test-assistant', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(mcpUrl(), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    open.push(mcp);
    return mcp;
  }

  it('answers a request without a token with 401 pointing at its metadata (RFC 9728 §5.1), which names this authorization server', async () => {
    const refused = await fetch(mcpUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer realm="api", resource_metadata="${metadataUrl()}"`);
    const metadata = await (await fetch(metadataUrl())).json();
    expect(metadata).toMatchObject({ resource: mcpUrl().href, authorization_servers: [issuer().origin], scopes_supported: [...appScopes(false)], bearer_methods_supported: ['header'] });
  });

  it("lets the SDK's own OAuth client find the authorization server from the 401, register, and get a token for /mcp", async () => {
    let clientInformation: OAuthClientInformationMixed | undefined;
    let tokens: OAuthTokens | undefined;
    let verifier = '';
    let authorizationUrl: URL | undefined;
    const provider: OAuthClientProvider = {
      redirectUrl: callback.redirectUri,
      clientMetadata: { client_name: 'SDK assistant', redirect_uris: [callback.redirectUri], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
      clientInformation: () => clientInformation,
      saveClientInformation: (information) => void (clientInformation = information),
      tokens: () => tokens,
      saveTokens: (saved) => void (tokens = saved),
      redirectToAuthorization: (url) => void (authorizationUrl = url),
      saveCodeVerifier: (saved) => void (verifier = saved),
      codeVerifier: () => verifier,
    };
    const first = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
    await expect(new Client({ name: 'sdk-assistant', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    // The MCP authorization spec: the client names the MCP server as the resource (RFC 8707), with PKCE S256.
    expect(authorizationUrl?.searchParams.get('resource')).toBe(mcpUrl().href);
    expect(authorizationUrl?.searchParams.get('code_challenge_method')).toBe('S256');
    const back = await consentByFetch(authorizationUrl!, person.cookie);
    await first.finishAuth(back.searchParams.get('code')!);
    expect(tokens?.access_token).toEqual(expect.any(String));

    const mcp = new Client({ name: 'sdk-assistant', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider }));
    open.push(mcp);
    const { tools } = await mcp.listTools();
    // Every scope an app may have was asked for (the metadata's scopes_supported) and granted: every operation a token reaches
    // with them is a tool. (But the resumable uploads' tus protocol, whose bytes and headers are no tool's arguments; and the
    // administration, whose admin scope no app gets unless the operator allows it, issue 28.)
    const tus = ['createProjectUpload', 'getProjectUploadOffset', 'appendProjectUpload', 'cancelProjectUpload'];
    expect(tools.map((tool) => tool.name).sort()).toEqual([...scopeOf].filter(([name, scope]) => !tus.includes(name) && scope !== 'admin').map(([name]) => name).sort());
  });

  it('lists the tools of the granted scopes only; calls a read tool and a write tool; refuses a tool beyond them', async () => {
    const granted = ['projects:read', 'comments:read', 'players:write'];
    // The person's own data, made with their personal token through the API.
    const project = await (await api(personalToken, '/projects', { method: 'POST', body: JSON.stringify({ name: `Spring EP ${backend}` }) })).json();
    const folder = await (await api(personalToken, `/projects/${project.id}/folders`, { method: 'POST', body: JSON.stringify({ name: 'Mixes' }) })).json();
    expect(folder.object).toBe('folder');

    const mcp = await connect(await oauthToken(granted.join(' ')));
    expect(mcp.getServerVersion()?.name).toBe('audio-share');
    const { tools } = await mcp.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['listProjects', 'getProject', 'listInboxComments', 'createPlayer', 'updatePlayer']));
    expect(names).not.toEqual(expect.arrayContaining(['createProject']));
    // A write scope implies the read of its resource (players:write gives the players:read tools too).
    for (const name of names) expect(scopeCovers(granted, scopeOf.get(name)!), name).toBe(true);
    expect(names.sort()).toEqual([...scopeOf].filter(([name, scope]) => scopeCovers(granted, scope) && !name.includes('ProjectUpload')).map(([name]) => name).sort());
    expect(names).toContain('listPlayers');
    expect(new Set(names).size).toBe(names.length);
    for (const absent of ['createProject', 'createWebhook', 'getCurrentUser', 'listWebhooks', 'createComment']) expect(names).not.toContain(absent);
    const createPlayer = tools.find((tool) => tool.name === 'createPlayer')!;
    expect(createPlayer.description).toContain('Creates a player and returns it');
    expect(createPlayer.inputSchema).toMatchObject({ type: 'object', required: ['body'], properties: { body: { $ref: '#/$defs/CreatePlayerRequest' } } });
    expect(createPlayer.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    const getProject = tools.find((tool) => tool.name === 'getProject')!;
    expect(getProject.inputSchema).toMatchObject({ required: ['projectid'], properties: { projectid: { $ref: '#/$defs/Id', description: expect.any(String) } }, $defs: { Id: { type: 'string' } } });
    expect(getProject.annotations).toMatchObject({ readOnlyHint: true });

    // A read tool: the person's projects.
    const listed = await mcp.callTool({ name: 'listProjects', arguments: {} });
    expect(listed.isError).toBeFalsy();
    expect(JSON.parse(text(listed))).toEqual(expect.arrayContaining([expect.objectContaining({ id: project.id, name: `Spring EP ${backend}` })]));
    const inbox = await mcp.callTool({ name: 'listInboxComments', arguments: { status: 'open' } });
    expect(inbox.isError).toBeFalsy();
    expect(JSON.parse(text(inbox))).toEqual(expect.any(Array));

    // A write tool: a share link for the folder, which the API then shows.
    const made = await mcp.callTool({ name: 'createPlayer', arguments: { body: { name: 'Mixes for the band', projectid: project.id, folderid: folder.id } } });
    expect(made.isError, text(made)).toBeFalsy();
    const player = JSON.parse(text(made));
    expect(player).toMatchObject({ object: 'player', name: 'Mixes for the band', projectid: project.id, folderid: folder.id, playerUrl: expect.any(String) });
    const read = await api(personalToken, `/players/${player.id}`);
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ id: player.id, folderid: folder.id });

    // The API's refusal is the tool's error: its problem document.
    const invalid = await mcp.callTool({ name: 'createPlayer', arguments: { body: { projectid: project.id } } });
    expect(invalid.isError).toBe(true);
    expect(JSON.parse(text(invalid))).toMatchObject({ type: '/problems/validation-error', status: 400 });
    const missing = await mcp.callTool({ name: 'getProject', arguments: {} });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain('projectid');

    // Beyond the scopes: refused before it runs (HTTP 403, insufficient_scope), and nothing is made.
    await expect(mcp.callTool({ name: 'createProject', arguments: { body: { name: 'Not allowed' } } })).rejects.toMatchObject({ code: 403 });
    const projects = await (await api(personalToken, '/projects')).json();
    expect(projects.map((one: { name: string }) => one.name)).not.toContain('Not allowed');
    // A tool that does not exist at all: a protocol error.
    await expect(mcp.callTool({ name: 'noSuchOperation', arguments: {} })).rejects.toThrow(/no tool noSuchOperation/);
  });

  it('refuses, with 403 naming the scope to ask for, a tools/call beyond the scopes (the MCP spec\'s scope challenge)', async () => {
    const token = await oauthToken('projects:read');
    const refused = await fetch(mcpUrl(), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'createPlayer', arguments: { body: { name: 'No' } } } }),
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer realm="mcp", error="insufficient_scope", scope="players:write", resource_metadata="${metadataUrl()}"`);
    expect(await refused.json()).toMatchObject({ type: '/problems/insufficient-scope', scope: 'players:write' });
    expect(await (await api(personalToken, '/players')).json()).toEqual(expect.not.arrayContaining([expect.objectContaining({ name: 'No' })]));
  });

  it('takes only tokens issued for it: an app token for the API is refused here, and its own on the API', async () => {
    const forApi = await oauthToken('projects:read', null);
    const onItsApi = await api(forApi, '/projects');
    expect(onItsApi.status, await onItsApi.clone().text()).toBe(200);
    const refused = await fetch(mcpUrl(), {
      method: 'POST',
      headers: { authorization: `Bearer ${forApi}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer realm="api", error="invalid_token", resource_metadata="${metadataUrl()}"`);
    expect((await refused.json()).detail).toContain(`resource=${mcpUrl().href}`);
    await expect(connect(forApi)).rejects.toMatchObject({ code: 401 });

    const forMcp = await oauthToken('projects:read');
    const onApi = await api(forMcp, '/projects');
    expect(onApi.status).toBe(401);
    expect((await onApi.json()).detail).toContain(`issued for ${mcpUrl().href}`);
    // The mark of the MCP server's own relayed calls is a secret of the process: a guess at it changes nothing.
    expect((await api(forMcp, '/projects', { headers: { 'x-internal-relay': 'a-guess-at-the-secret-of-43-characters-long' } })).status).toBe(401);
    // The person's personal token, for every resource of the server, works here too.
    expect((await (await connect(personalToken)).listTools()).tools.length).toBeGreaterThan(50);
  });

  it('lists the assistant among the connected apps, and revoking it there ends its access to /mcp', async () => {
    const { accessToken, appid } = await oauthGrant('comments:read');
    const mcp = await connect(accessToken);
    expect((await mcp.listTools()).tools.map((tool) => tool.name)).toContain('listInboxComments');
    const connected = await (await person.fetch('/me/connected-apps')).json();
    expect(connected).toEqual(expect.arrayContaining([expect.objectContaining({ id: appid, scopes: ['comments:read'] })]));
    expect((await person.fetch(`/me/connected-apps/${appid}`, { method: 'DELETE' })).status).toBe(200);
    await expect(mcp.listTools()).rejects.toMatchObject({ code: 401 });
  });

  it('refuses, with 403, a request whose Origin is not this server\'s (the MCP spec\'s DNS rebinding guard), before any token is looked at', async () => {
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const post = (headers: Record<string, string>) =>
      fetch(mcpUrl(), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: list });
    for (const origin of ['https://rebound.example', 'null', `${issuer().protocol}//localhost.example:${issuer().port}`]) {
      const refused = await post({ origin, authorization: `Bearer ${personalToken}` });
      expect(refused.status, origin).toBe(403);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(((await refused.json()) as { detail: string }).detail).toContain(`came from ${origin}`);
      // Refused before the token is looked at: none at all gets the same 403, not the 401 that points at the metadata.
      expect((await post({ origin })).status).toBe(403);
    }
    // This server's own origin, in any case, and no Origin at all (a client that is not a browser) pass.
    for (const headers of [{ origin: issuer().origin.toUpperCase() }, {}] as Array<Record<string, string>>) {
      const answered = await post({ ...headers, authorization: `Bearer ${personalToken}` });
      expect(answered.status).toBe(200);
      expect(((await answered.json()) as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(0);
    }
  });

  it('is stateless: GET and DELETE are 405', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(mcpUrl(), { method, headers: { authorization: `Bearer ${personalToken}`, accept: 'text/event-stream' } });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
  });
});

describe('The MCP server on the sandbox', () => {
  let server: TestServer;
  beforeAll(async () => {
    // The demo's tracks are analysed before a new token's first request is answered: the audio worker runs here.
    server = await startTestServer('sqlite', { SANDBOX: 'true', PROCESSING: 'in-process', JOB_POLL_MS: '50' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  // A sandbox account is made, with its demo project, at its token's first request: that takes a while.
  it("takes any token, as the sandbox's API does, and its tools act for that token's sandbox account", { timeout: 120_000 }, async () => {
    const token = `mcp-sandbox-${Date.now()}`;
    const mcp = new Client({ name: 'sandbox-assistant', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.address}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      const made = await mcp.callTool({ name: 'createProject', arguments: { body: { name: 'Sandbox EP' } } });
      expect(made.isError, text(made)).toBeFalsy();
      const project = JSON.parse(text(made));
      const listed = await (await fetch(`${server.apiUrl}/projects`, { headers: { authorization: `Bearer ${token}` } })).json();
      expect(listed).toEqual(expect.arrayContaining([expect.objectContaining({ id: project.id, name: 'Sandbox EP' })]));
      const other = await (await fetch(`${server.apiUrl}/projects`, { headers: { authorization: 'Bearer someone-else' } })).json();
      expect(other).toEqual(expect.not.arrayContaining([expect.objectContaining({ id: project.id })]));
    } finally {
      await mcp.close();
    }
  });
});

describe('The MCP server under the per-address rate limit', () => {
  let server: TestServer;
  const burst = 12;
  beforeAll(async () => {
    server = await startTestServer('sqlite', { RATE_LIMIT_IP_PER_SECOND: '1', RATE_LIMIT_IP_BURST: String(burst) });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('counts a tool call once, at /mcp: the request it relays to the API is not counted again', async () => {
    const token = await server.token('mcp-limit@example.org');
    const call = (id: number) =>
      fetch(`${server.address}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'listProjects', arguments: {} } }),
      });
    // server.token() made no request; every one of the burst is a tool call, which would be two were the relay counted.
    for (let id = 1; id <= burst; id += 1) {
      const response = await call(id);
      expect(response.status, `call ${id}`).toBe(200);
      expect((await response.json()).result.isError, `call ${id}`).toBeUndefined();
    }
    // The limit still holds for /mcp itself: calls go on being made until one is refused (one more a second comes back).
    let refused: Response | undefined;
    for (let id = burst + 1; id <= burst + 20 && !refused; id += 1) {
      const response = await call(id);
      if (response.status === 429) refused = response;
      else await response.body?.cancel();
    }
    expect(refused?.headers.get('retry-after')).toEqual(expect.any(String));
  });
});
