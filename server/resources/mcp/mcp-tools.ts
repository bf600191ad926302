/**
 * The MCP server's tools, made from the spec (generated/openapi.json), one
 * per operation a token can reach: those whose `security` names bearerAuth
 * or oauth2. Each is named by its operationId, described by the operation's
 * description (else its summary), and takes an input schema whose
 * properties are the operation's parameters and, under `body`, its JSON
 * request body. The schemas the spec shares (components/schemas) go under
 * the input schema's `$defs`, so a recursive one stays finite.
 *
 * Left out: operations a tool cannot drive, because their request is not
 * JSON arguments: a HEAD, a request body that is not JSON, or a header the
 * caller must send (the tus upload protocol's).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { scopeCovers } from '../../auth/scopes.ts';
import { OPERATIONS } from '../../../generated/operations.ts';
import { operationById } from '../../http/route.ts';

type Json = Record<string, unknown>;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema?: Json;
}

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  deprecated?: boolean;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<Parameter | { $ref: string }>;
  requestBody?: { required?: boolean; description?: string; content?: Record<string, { schema?: Json }> } | { $ref: string };
}

interface Spec {
  security?: Array<Record<string, string[]>>;
  paths: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, Json>; parameters?: Record<string, Parameter> };
}

/** An MCP tool with what it takes to perform it. */
export interface ApiTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, Json>; required?: string[]; additionalProperties: false; $defs?: Record<string, Json> };
  annotations: { title?: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: false };
  method: string;
  /** The path under /api/v1, with {name} placeholders. */
  path: string;
  /** The scope a token needs (the `oauth2` requirement's), or undefined when the operation names none. */
  scope: string | undefined;
  parameters: Array<{ name: string; in: 'path' | 'query' | 'header' }>;
  hasBody: boolean;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head'] as const;
const SCHEMA_REF = '#/components/schemas/';
const PARAMETER_REF = '#/components/parameters/';

/** `#/components/schemas/X` becomes `#/$defs/X`, and every schema X refers to is collected. */
function rewriteRefs(value: unknown, used: Set<string>): unknown {
  if (Array.isArray(value)) return value.map((item) => rewriteRefs(item, used));
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [key, inner] of Object.entries(value)) {
    // `example(s)` are documentation; x- extensions are the spec's own; neither is JSON Schema a client needs.
    if (key === 'example' || key === 'examples' || key.startsWith('x-')) continue;
    if (key === '$ref' && typeof inner === 'string' && inner.startsWith(SCHEMA_REF)) {
      const name = inner.slice(SCHEMA_REF.length);
      used.add(name);
      out.$ref = `#/$defs/${name}`;
    } else {
      out[key] = rewriteRefs(inner, used);
    }
  }
  return out;
}

export function toolsOfSpec(spec: Spec): ApiTool[] {
  const schemas = spec.components?.schemas ?? {};
  const parameterOf = (parameter: Parameter | { $ref: string }): Parameter =>
    '$ref' in parameter ? spec.components!.parameters![parameter.$ref.slice(PARAMETER_REF.length)] : parameter;
  const tools: ApiTool[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const method of METHODS) {
      const operation = item[method] as Operation | undefined;
      if (!operation?.operationId || method === 'head') continue;
      // OpenAPI, Operation Object `security`: "This definition overrides any declared top-level security."
      const security = operation.security ?? spec.security ?? [];
      if (!security.some((requirement) => 'bearerAuth' in requirement || 'oauth2' in requirement)) continue;
      const requestBody = operation.requestBody && !('$ref' in operation.requestBody) ? operation.requestBody : undefined;
      const content = requestBody?.content ?? {};
      if (requestBody && !content['application/json']) continue;
      const parameters = [...((item.parameters as Operation['parameters']) ?? []), ...(operation.parameters ?? [])].map(parameterOf);
      if (parameters.some((parameter) => parameter.in === 'header' && parameter.required)) continue;

      const used = new Set<string>();
      const properties: Record<string, Json> = {};
      const required: string[] = [];
      const taken: ApiTool['parameters'] = [];
      for (const parameter of parameters) {
        if (parameter.in === 'cookie') continue;
        properties[parameter.name] = { ...(rewriteRefs(parameter.schema ?? {}, used) as Json), ...(parameter.description ? { description: parameter.description.trim() } : {}) };
        // OpenAPI, Parameter Object `required`: "If the parameter location is "path", this field is REQUIRED and its value MUST be true."
        if (parameter.required || parameter.in === 'path') required.push(parameter.name);
        taken.push({ name: parameter.name, in: parameter.in });
      }
      const bodySchema = content['application/json']?.schema;
      if (bodySchema) {
        properties.body = { ...(rewriteRefs(bodySchema, used) as Json), ...(requestBody?.description ? { description: requestBody.description.trim() } : {}) };
        if (requestBody?.required) required.push('body');
      }
      // The schemas referred to, and those they refer to, until none is new.
      const defs: Record<string, Json> = {};
      const pending = [...used];
      while (pending.length) {
        const name = pending.pop()!;
        if (defs[name] || !schemas[name]) continue;
        const inner = new Set<string>();
        defs[name] = rewriteRefs(schemas[name], inner) as Json;
        for (const next of inner) if (!defs[next]) pending.push(next);
      }
      // Who may call it is the operation table's (generated/operations.ts), as it is for the API's own authentication.
      const scope = operationById(operation.operationId)?.security.scope;
      const title = operation.summary?.trim();
      tools.push({
        name: operation.operationId,
        ...(title ? { title } : {}),
        description: `${(operation.description ?? operation.summary ?? operation.operationId).trim()}\n\n${method.toUpperCase()} /api/v1${path}${scope ? `; needs the scope ${scope}` : ''}.`,
        inputSchema: {
          type: 'object',
          properties,
          ...(required.length ? { required } : {}),
          additionalProperties: false,
          ...(Object.keys(defs).length ? { $defs: defs } : {}),
        },
        // MCP, ToolAnnotations: hints for the client (which may ask the person before a destructive call), never a promise.
        annotations: {
          ...(title ? { title } : {}),
          readOnlyHint: method === 'get',
          destructiveHint: method === 'delete',
          // RFC 9110 §9.2.2: "the request methods PUT, DELETE, and safe request methods are idempotent".
          idempotentHint: method === 'get' || method === 'put' || method === 'delete',
          openWorldHint: false,
        },
        method: method.toUpperCase(),
        path,
        scope,
        parameters: taken,
        hasBody: Boolean(bodySchema),
      });
    }
  }
  return tools;
}

/** One operation of the spec, tool or not, by its method and path template (under /api/v1). */
export interface ApiRoute {
  operationId: string;
  method: string;
  path: string;
}

/**
 * Every operation of the API, tools and the others (session-only, anonymous, tus), from the operation table: what the
 * tests of the relay route (mcp-relay.test.ts), as the API's own match does.
 */
export function apiRoutes(): ApiRoute[] {
  return OPERATIONS.map((operation) => ({ operationId: operation.id, method: operation.method, path: operation.path }));
}

let bundled: Spec | undefined;
const bundledSpec = (): Spec => (bundled ??= JSON.parse(readFileSync(resolve(import.meta.dirname, '../../../generated/openapi.json'), 'utf8')) as Spec);

let fromSpec: ApiTool[] | undefined;

/** The tools of the bundled spec, made once. */
export function apiTools(): ApiTool[] {
  fromSpec ??= toolsOfSpec(bundledSpec());
  return fromSpec;
}


/** Whether a token with these scopes (`all`: a personal token with every scope) may call the tool. */
// The API's rule, the same here: a write implies its read (auth/scopes.ts).
export const toolAllowed = (tool: Pick<ApiTool, 'scope'>, scopes: readonly string[] | 'all') => scopes === 'all' || tool.scope === undefined || scopeCovers(scopes, tool.scope);
