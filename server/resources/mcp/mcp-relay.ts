/**
 * The request a tools/call relays to the API (mcp-routes.ts): built from the
 * tool's operation and the call's arguments, and checked so that a call of
 * one tool can only ever reach that tool's operation.
 *
 * Why it needs checking: the arguments are whatever the assistant sent (and
 * so whatever a prompt or a document it read put there). A path argument is
 * filled into the operation's path template, and fetch parses the URL again
 * by the WHATWG URL Standard, which removes dot-segments and reads `\` as
 * `/`: deleteComment with commentid `..` was sent as
 * DELETE /projects/p/files/f, and deleted the file.
 *
 * So, in order, before anything is sent:
 * 1. each argument that cannot be sent as it is is refused, saying what to
 *    fix (a path argument that is a dot-segment or holds a delimiter, a
 *    header argument with CR, LF or NUL, a string that is not well-formed
 *    Unicode); mcp-routes.ts answers that as a tool error, as it does the
 *    other bad arguments;
 * 2. the request is built: path arguments percent-encoded with
 *    encodeURIComponent, query arguments with URLSearchParams;
 * 3. the URL as parsed (the same parser fetch uses) must match the tool's
 *    own method and template exactly, segment by segment and case-sensitively,
 *    and must not also match another operation of the spec (getComment's
 *    commentid `export` would be exportComments, whose literal segment is
 *    routed before the placeholder).
 * Step 3 is not meant to refuse anything step 1 let through: it is there so
 * that a rule step 1 lacks cannot turn into a call of another operation.
 */
import type { ApiTool } from './mcp-tools.ts';
import { matchOperation } from '../../http/route.ts';

/** What mcp-routes.ts sends, but the caller's credential and the relay's own headers, which it adds. */
export interface RelayedRequest {
  method: string;
  url: URL;
  /** The header arguments, by lowercase name. */
  headers: Record<string, string>;
  body: string | undefined;
}

export type Built = { request: RelayedRequest; refused?: undefined } | { request?: undefined; refused: string };

/** The API's base path, which every template is under. */
export const API_BASE = '/api/v1';

/**
 * RFC 3986 §3.3: "The path segments "." and "..", also known as dot-segments, are defined for relative reference
 * within the path name hierarchy"; §5.2.4 removes them, so `a/../b` is `b`. The WHATWG URL Standard, which fetch's
 * parser follows, counts encoded dots as dots: "A single-dot URL path segment is a URL path segment that is "." or
 * an ASCII case-insensitive match for "%2e"", and a double-dot one is ".." or a match for ".%2e", "%2e." or
 * "%2e%2e". encodeURIComponent would send `%2e` as `%252e`, which no parser takes for a dot, but a value that means
 * a dot-segment is refused all the same: it is no id of this API, and the caller most likely meant the dots.
 */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;
/**
 * Characters that end a path segment or the path (RFC 3986 §3: "/", "?" and "#"; the WHATWG parser reads "\" as
 * "/" in an http URL), and control characters (Unicode's Cc: C0, DEL and C1), which no id of this API holds.
 */
const PATH_DELIMITER = /[/\\?#]/;
const CONTROL = /\p{Cc}/u;
/**
 * RFC 9110 §5.5: "Field values containing CR, LF, or NUL characters are invalid and dangerous, due to the varying
 * ways that implementations might parse and interpret those characters; a recipient of CR, LF, or NUL within a
 * field value MUST either reject the message or replace each of those characters with SP". Beyond those, a field
 * value is HTAB, SP, VCHAR and obs-text (%x80-FF): fetch refuses anything else (a character above U+00FF too).
 */
const HEADER_BREAK = /[\r\n\0]/;
const NOT_FIELD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * A surrogate code unit not in a pair (with the u flag a pair is one code point, which this does not match): it has
 * no UTF-8 form, so encodeURIComponent throws on it and URLSearchParams sends U+FFFD instead. (String's
 * isWellFormed says the same, but is ES2024, past this project's TypeScript lib.)
 */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const wellFormed = (value: string) => !LONE_SURROGATE.test(value);

const quoted = (value: string) => JSON.stringify(value);

/** Why this value cannot be the path's {name}, or undefined when it can. */
export function pathArgumentProblem(tool: Pick<ApiTool, 'name'>, name: string, value: unknown): string | undefined {
  const fix = `Give ${name} the id itself, as the API returned it.`;
  if (typeof value !== 'string' || value === '') return `${tool.name} needs ${name}, a non-empty string (the path's {${name}}).`;
  if (!wellFormed(value)) return `${tool.name}'s ${name} is not well-formed Unicode (it holds a lone surrogate). ${fix}`;
  if (DOT_SEGMENT.test(value)) {
    const encoded = value.includes('%') ? ' (a URL parser reads %2e as a dot)' : '';
    return `${tool.name}'s ${name} cannot be ${quoted(value)}: a path segment "." or ".." (RFC 3986 §3.3 dot-segments)${encoded} would make the request another path. ${fix}`;
  }
  if (PATH_DELIMITER.test(value)) return `${tool.name}'s ${name} cannot hold "/", "\\", "?" or "#", which would end its path segment; it was ${quoted(value)}. ${fix}`;
  if (CONTROL.test(value)) return `${tool.name}'s ${name} cannot hold a control character; it was ${quoted(value)}. ${fix}`;
  return undefined;
}

/** Why this value cannot be the header's, or undefined when it can. */
export function headerArgumentProblem(tool: Pick<ApiTool, 'name'>, name: string, value: string): string | undefined {
  if (HEADER_BREAK.test(value)) return `${tool.name}'s ${name} cannot hold CR, LF or NUL (RFC 9110 §5.5: they would end the header); it was ${quoted(value)}. Send the value on one line.`;
  if (NOT_FIELD_VALUE.test(value)) return `${tool.name}'s ${name} can hold only printable ASCII, tabs and Latin-1 (RFC 9110 §5.5 field values); it was ${quoted(value)}.`;
  return undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const kindOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`);

/**
 * The tool a tools/call names and its arguments, or why the call does not satisfy the CallToolRequest schema
 * (params an object, params.name a string, params.arguments absent or an object) or names no tool of this token:
 * the MCP spec's protocol errors ("Unknown tools", "Malformed requests (requests that fail to satisfy
 * CallToolRequest schema)"), which mcp-routes.ts answers with -32602.
 */
export function readToolCall(params: unknown, tools: readonly ApiTool[]): { tool: ApiTool; args: Record<string, unknown>; invalid?: undefined } | { invalid: string } {
  const example = '{"name": "listProjects", "arguments": {}}';
  if (!isObject(params)) return { invalid: `tools/call needs params, an object naming the tool and holding its arguments, such as ${example}; this one had ${params === undefined ? 'none' : kindOf(params)}.` };
  if (typeof params.name !== 'string') return { invalid: `tools/call needs params.name, the name of a tool as tools/list gives it, such as ${example}; this one had ${params.name === undefined ? 'none' : kindOf(params.name)}.` };
  if (params.arguments !== undefined && !isObject(params.arguments)) {
    return { invalid: `tools/call's params.arguments is an object of the tool's arguments by name, such as ${example}; this one was ${kindOf(params.arguments)}.` };
  }
  const tool = tools.find((candidate) => candidate.name === params.name);
  if (!tool) return { invalid: `There is no tool ${params.name} for this token. tools/list names those it may call.` };
  return { tool, args: (params.arguments ?? {}) as Record<string, unknown> };
}

const argumentText = (item: unknown) => (typeof item === 'object' ? JSON.stringify(item) : String(item));

/**
 * The request for this tool with these arguments, at `origin` (the API's listener), or why it is refused.
 * The request must reach the tool's own operation and no other, by the API's own match.
 */
export function buildRelayedRequest(tool: ApiTool, args: Record<string, unknown>, origin: string): Built {
  const segments: Record<string, string> = {};
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  for (const parameter of tool.parameters) {
    const value = args[parameter.name];
    if (parameter.in === 'path') {
      const problem = pathArgumentProblem(tool, parameter.name, value);
      if (problem) return { refused: problem };
      segments[parameter.name] = encodeURIComponent(value as string);
      continue;
    }
    if (value === undefined || value === null) continue;
    const values = (Array.isArray(value) ? value : [value]).map(argumentText);
    // URLSearchParams would send a lone surrogate as U+FFFD: another value than the one given.
    const malformed = values.find((item) => !wellFormed(item));
    if (malformed !== undefined) return { refused: `${tool.name}'s ${parameter.name} is not well-formed Unicode (it holds a lone surrogate): ${quoted(malformed)}.` };
    if (parameter.in === 'query') {
      for (const item of values) query.append(parameter.name, item);
    } else {
      const joined = values.join(', ');
      const problem = headerArgumentProblem(tool, parameter.name, joined);
      if (problem) return { refused: problem };
      headers[parameter.name.toLowerCase()] = joined;
    }
  }
  // A function replacement: a string one would read "$&" and the like in the value as patterns (encodeURIComponent
  // encodes "$", but the template's filling should not depend on that).
  const path = tool.path.replace(/\{([^}]+)\}/g, (whole, name: string) => segments[name] ?? whole);
  const url = new URL(`${origin}${API_BASE}${path}${query.size ? `?${query}` : ''}`);
  const request: RelayedRequest = { method: tool.method, url, headers, body: tool.hasBody && args.body !== undefined ? JSON.stringify(args.body) : undefined };
  const stray = strayReason(tool, request, segments, query, origin);
  return stray ? { refused: `${tool.name} was not performed: ${stray}. Give each path argument the id itself, as the API returned it.` } : { request };
}


const templateSegments = (path: string) => `${API_BASE}${path}`.split('/');
const PLACEHOLDER = /^\{([^}]+)\}$/;

/**
 * Why the request would reach anything but the tool's own operation, or undefined when it reaches that only.
 * `segments` are the encoded path arguments by name, `query` the query sent.
 */
function strayReason(tool: ApiTool, request: RelayedRequest, segments: Record<string, string>, query: URLSearchParams, origin: string): string | undefined {
  const { url } = request;
  if (request.method !== tool.method) return `its request would be ${request.method}, not ${tool.method}`;
  // Compared as parsed: an address such as ::ffff:127.0.0.1 is written otherwise by the parser.
  if (url.origin !== new URL(origin).origin || url.username !== '' || url.password !== '' || url.hash !== '') return 'its request would go elsewhere than the API';
  if (url.search !== (query.size ? `?${query}` : '')) return 'its query would not be its arguments';
  const sent = url.pathname.split('/');
  const own = templateSegments(tool.path);
  if (sent.length !== own.length) return `its path ${url.pathname} would not be ${API_BASE}${tool.path}`;
  for (const [index, segment] of own.entries()) {
    const name = PLACEHOLDER.exec(segment)?.[1];
    // Exact, case included: RFC 3986 §6.2.2.1 has only the scheme and host case-insensitive.
    const expected = name === undefined ? segment : segments[name];
    if (sent[index] !== expected || (name !== undefined && sent[index] === '')) return `its path ${url.pathname} would not be ${API_BASE}${tool.path}`;
  }
  // And the API's own one match (http/route.ts) takes it to the tool's operation and no other: a literal of another
  // operation where the tool has a placeholder (getComment's commentid "export" is exportComments) would win there.
  const match = matchOperation(tool.method, url.pathname.slice(API_BASE.length));
  if (match.kind !== 'operation') return `its path ${url.pathname} is no operation of the API`;
  if (match.operation.id !== tool.name) return `its path ${url.pathname} is ${match.operation.method} ${API_BASE}${match.operation.path} (${match.operation.id}), whose literal segment a path argument equals`;
  return undefined;
}
