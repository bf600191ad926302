/**
 * The MCP server at /mcp: a door for AI assistants. Streamable HTTP
 * (@modelcontextprotocol/sdk's transport), stateless: every POST is answered
 * on its own, by a server made for that request, so any process behind a
 * load balancer answers any of them and nothing is kept between them.
 *
 * Authorization is the MCP authorization spec's (2025-06-18 and later):
 * - this server is an OAuth protected resource, `<PUBLIC_URL>/mcp`, whose
 *   metadata (RFC 9728) is at /.well-known/oauth-protected-resource/mcp;
 * - a request without a token gets 401 with `WWW-Authenticate: Bearer …,
 *   resource_metadata="<that URL>"` (RFC 9728 §5.1), from which a client
 *   finds the authorization server and asks the person's consent;
 * - the token must have been issued for this resource (RFC 8707 audience):
 *   "MCP servers MUST validate that access tokens were issued specifically
 *   for them". An app's token for the API is refused here, as this one is
 *   on the API. A personal token (Settings) works here as on the API.
 *
 * The tools are the API's operations (mcp-tools.ts), listed as far as the
 * token's scopes reach. A tool is performed by the API itself: a request to
 * this process's own listener with the caller's token, so every check,
 * validation, scope and limit of the API applies unchanged, and its answer
 * (a problem document as a tool error) is the tool's.
 */
import type { IncomingMessage } from 'node:http';
import { isIPv6 } from 'node:net';
import { Router, type NextFunction, type Request, type Response } from 'express';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Context } from '../../context.ts';
import { authenticate } from '../../http/auth.ts';
import { jsonBody } from '../../http/json-body.ts';
import { forbidden, HttpProblem } from '../../lib/problems.ts';
import { relayHeaders } from '../../http/internal-relay.ts';
import { protectedResourceMetadata } from '../oauth/resource-metadata.ts';
import { issuerOf, mcpResource } from '../oauth/oauth-provider.ts';
import { provisionSandboxAccount } from '../sandbox/sandbox-service.ts';
import { apiTools, toolAllowed, type ApiTool } from './mcp-tools.ts';
import { buildRelayedRequest, readToolCall } from './mcp-relay.ts';
import { appScopes } from '../oauth/oauth-scopes.ts';

type Ports = Pick<Context, 'config' | 'store' | 'clock' | 'logger' | 'secrets' | 'media'>;

export const MCP_PATH = '/mcp';
export const MCP_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';

const INSTRUCTIONS =
  "Audio Share's API as tools, one per operation (named by its operationId), acting for the person who authorized you, within the scopes they granted. " +
  'Path and query parameters are arguments of their own; a request body goes under `body`. An answer is the API\'s JSON; an error is its problem document (RFC 9457), whose `detail` says what to fix.';

/** The tool as MCP lists it: what performs it stays here. */
const listed = (tool: ApiTool) => ({ name: tool.name, ...(tool.title ? { title: tool.title } : {}), description: tool.description, inputSchema: tool.inputSchema, annotations: tool.annotations });

/**
 * The MCP SDK (with zod, about 170 modules), loaded at the first MCP request, not at start: a server no MCP client
 * uses never pays its memory. Node keeps each module once loaded, so later requests find them at once.
 */
const mcpSdk = async () => {
  const [{ Server }, { StreamableHTTPServerTransport }, { ErrorCode, ListToolsRequestSchema, McpError }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return { Server, StreamableHTTPServerTransport, ErrorCode, ListToolsRequestSchema, McpError };
};

/** What /mcp takes: a bearer token (personal, or an OAuth access token for the MCP resource), with no scope of its own. */
const MCP_SECURITY = { token: true, session: false, anonymous: false } as const;

const toolError = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

export function mcpRoutes(ctx: Ports): Router {
  const router = Router();
  const publicUrl = () => ctx.config.publicUrl.replace(/\/+$/, '');
  const metadataUrl = () => `${publicUrl()}${MCP_METADATA_PATH}`;

  // RFC 9728 §3.1: the metadata of https://host/mcp is at https://host/.well-known/oauth-protected-resource/mcp.
  router.get(MCP_METADATA_PATH, (_req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.json(protectedResourceMetadata(ctx.config.publicUrl, MCP_PATH, 'Audio Share MCP server', [issuerOf(ctx.config.publicUrl)], appScopes(ctx.config.oauthAllowAdminScope)));
  });

  router.all(
    MCP_PATH,
    refuseOtherOrigins,
    authenticate({ tokens: ctx.store.tokens }, {
      // /mcp is no operation of the API's table: it takes a bearer token, and each tool call asks for its operation's scope.
      securityOf: () => MCP_SECURITY,
      accountOfUnknownToken: ctx.config.sandbox ? (token) => provisionSandboxAccount(ctx, token) : undefined,
      howToGetOne: ctx.config.sandbox
        ? 'This is a sandbox: any token works, such as "Bearer my-sandbox-token".'
        : `Get one from this server's OAuth authorization server with resource=${mcpResource(ctx.config.publicUrl)} (its metadata: ${metadataUrl()}), or use a personal token from Settings.`,
      now: () => ctx.clock.now(),
      onBookkeepingError: (error) => ctx.logger.warn("recording a credential's last use failed", { err: error }),
      resource: () => mcpResource(ctx.config.publicUrl),
      resourceMetadata: metadataUrl,
    }),
    jsonBody(),
    (req, res, next) => answer(req, res).catch(next),
  );

  /**
   * MCP, Streamable HTTP, Security Warning: "Servers MUST validate the Origin header on all incoming connections to
   * prevent DNS rebinding attacks. If the Origin header is present and invalid, servers MUST respond with HTTP 403
   * Forbidden." Valid is this server's own origin (PUBLIC_URL's); a client that is not a browser sends none, and passes.
   */
  function refuseOtherOrigins(req: Request, _res: Response, next: NextFunction): void {
    const origin = req.get('origin');
    const own = new URL(ctx.config.publicUrl).origin;
    if (origin !== undefined && origin.toLowerCase() !== own.toLowerCase()) {
      throw forbidden(`${MCP_PATH} takes requests from pages of ${own} only, and this one came from ${origin}. An MCP client that is not a browser sends no Origin header.`);
    }
    next();
  }

  async function answer(req: Request, res: Response): Promise<void> {
    // MCP, Streamable HTTP: "The server MUST either return Content-Type: text/event-stream in response to this HTTP
    // GET, or else return HTTP 405 Method Not Allowed"; a stateless server has no stream to offer, nor a session to DELETE.
    if (req.method !== 'POST') {
      throw new HttpProblem('method-not-allowed', `${MCP_PATH} takes POST only: this MCP server is stateless (Streamable HTTP without sessions), so it offers no event stream to GET and no session to DELETE.`, { headers: { Allow: 'POST' } });
    }
    const token = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '')![1];
    const scopes = req.auth?.scopes ?? [];
    const tools = apiTools().filter((tool) => toolAllowed(tool, scopes));
    refuseBeyondScope(req.body, scopes, metadataUrl());

    const { Server, StreamableHTTPServerTransport, ErrorCode, ListToolsRequestSchema, McpError } = await mcpSdk();
    const server = new Server({ name: 'audio-share', title: 'Audio Share', version: '1.0.0' }, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map(listed) }));
    // tools/call is read from the raw request, by the SDK's handler of methods that have none of their own, and not
    // through setRequestHandler(CallToolRequestSchema): the SDK parses a request against a handler's schema before the
    // handler runs, and answers one that fails it (no params, arguments that are not an object) with -32603 Internal
    // error. JSON-RPC 2.0 §5.1: "-32602 | Invalid params | Invalid method parameter(s)."; MCP, Tools, Error Handling:
    // "Protocol Errors: Standard JSON-RPC errors for issues like: Unknown tools, Malformed requests (requests that
    // fail to satisfy CallToolRequest schema)".
    server.fallbackRequestHandler = async (request) => {
      // What the SDK answers a method without a handler (JSON-RPC 2.0 §5.1: "-32601 | Method not found").
      if (request.method !== 'tools/call') throw new McpError(ErrorCode.MethodNotFound, 'Method not found');
      const call = readToolCall(request.params, tools);
      if (call.invalid !== undefined) throw new McpError(ErrorCode.InvalidParams, call.invalid);
      return perform(req, call.tool, call.args, token);
    };
    // enableJsonResponse: each answer is one JSON document, not an event stream: nothing here streams.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    // The caller's credential is closed over above; the transport's own `auth` (the SDK's AuthInfo) is not used.
    await transport.handleRequest(req as IncomingMessage, res, req.body);
  }

  /** Performs the tool's operation through this process's own API, with the caller's token, and answers with what the API answered. */
  async function perform(req: Request, tool: ApiTool, args: Record<string, unknown>, token: string): Promise<CallToolResult> {
    const known = new Set([...tool.parameters.map((parameter) => parameter.name), ...(tool.hasBody ? ['body'] : [])]);
    const unknown = Object.keys(args).filter((name) => !known.has(name));
    if (unknown.length) return toolError(`${tool.name} takes no argument ${unknown.join(', ')}. It takes: ${[...known].join(', ') || 'nothing'}.`);
    const socket = req.socket;
    const host = isIPv6(socket.localAddress ?? '') ? `[${socket.localAddress}]` : socket.localAddress;
    // Refused arguments are the caller's to fix, like the unknown ones above: a tool error saying what to fix, and
    // nothing is sent (mcp-relay.ts says which and why).
    const built = buildRelayedRequest(tool, args, `http://${host}:${socket.localPort}`);
    if (built.refused !== undefined) return toolError(built.refused);
    const { method, url, body } = built.request;
    // The caller's credential and the relay's mark after the header arguments: no argument can stand in for them.
    const headers: Record<string, string> = { ...built.request.headers, authorization: `Bearer ${token}`, accept: 'application/json', ...relayHeaders() };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (req.id) headers['x-request-id'] = String(req.id);
    let response: globalThis.Response;
    try {
      response = await fetch(url, { method, headers, body, redirect: 'manual' });
    } catch (error) {
      ctx.logger.error('an MCP tool call could not reach the API', { err: error, tool: tool.name });
      return toolError(`${tool.name} could not be performed: the API did not answer. Try again.`);
    }
    const text = await response.text();
    const content: CallToolResult['content'] = [{ type: 'text', text: text || `${response.status} ${response.statusText}` }];
    // An update takes If-Match with the ETag its resource was read with (RFC 9110 §13.1.1): the tool says it.
    const etag = response.headers.get('etag');
    if (etag) content.push({ type: 'text', text: `ETag: ${etag}` });
    return { content, ...(response.status >= 400 ? { isError: true } : {}) };
  }

  return router;
}

/**
 * A tools/call of a tool beyond the token's scopes is refused before it
 * runs, as the MCP authorization spec asks ("Runtime Insufficient Scope
 * Errors": HTTP 403 with `WWW-Authenticate: Bearer error="insufficient_scope",
 * scope=…, resource_metadata=…`), so that a client may ask the person for
 * more. RFC 6750 §3.1 too: "The resource server SHOULD respond with the HTTP
 * 403 (Forbidden) status code and MAY include the "scope" attribute".
 */
function refuseBeyondScope(body: unknown, scopes: readonly string[] | 'all', metadataUrl: string): void {
  const messages = Array.isArray(body) ? body : [body];
  for (const message of messages) {
    const call = message as { method?: unknown; params?: { name?: unknown } } | null;
    if (call?.method !== 'tools/call' || typeof call.params?.name !== 'string') continue;
    const tool = apiTools().find((candidate) => candidate.name === call.params!.name);
    if (!tool?.scope || toolAllowed(tool, scopes)) continue;
    const held = scopes === 'all' ? 'every scope' : scopes.join(', ') || 'no scope';
    throw new HttpProblem('insufficient-scope', `The tool ${tool.name} needs the scope ${tool.scope}, which this token was not granted (it holds: ${held}). Ask the person to authorize ${tool.scope}.`, {
      headers: { 'WWW-Authenticate': `Bearer realm="mcp", error="insufficient_scope", scope="${tool.scope}", resource_metadata="${metadataUrl}"` },
      members: { scope: tool.scope },
    });
  }
}
