/**
 * A probe derived from the spec, as an attacker's scanner would run it:
 * every operation of generated/openapi.json gets malformed inputs (a NUL in
 * each path parameter and string query parameter, a NUL in each string of
 * its example body and of its body schema's top-level fields, a wrong type
 * in each field, bodies of the wrong shape, a Content-Encoding that lies, no
 * token), on SQLite and on PostgreSQL. Nothing may answer 5xx, and every
 * error must be an RFC 9457 problem.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../testing/harness.ts';
import { backends } from '../testing/databases.ts';
import { specPath } from '../app.ts';
import { hashPassword } from '../auth/passwords.ts';

interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
}
interface Parameter {
  $ref?: string;
  name: string;
  in: 'path' | 'query' | 'header';
  schema?: Schema;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  security?: unknown[];
  requestBody?: { content: Record<string, { schema?: Schema; example?: unknown; examples?: Record<string, { value: unknown }> }> };
}

/**
 * Whether the operation needs a bearer token: it has security requirements
 * and none of them is the empty one (`{}`), which listener operations list
 * because anyone with a public player's link may call them.
 */
/** Whether only the account's session may call it (token and session management): a token there is refused. */
function sessionOnly(operation: Operation): boolean {
  const requirements = (operation.security ?? []) as Array<Record<string, unknown>>;
  return requirements.length > 0 && requirements.every((requirement) => Object.keys(requirement).length === 1 && 'sessionCookie' in requirement);
}

function requiresToken(operation: Operation): boolean {
  const requirements = (operation.security ?? [{ bearerAuth: [] }]) as Array<Record<string, unknown>>;
  return requirements.length > 0 && requirements.every((requirement) => Object.keys(requirement).length > 0);
}

const spec = JSON.parse(readFileSync(specPath, 'utf8'));
const resolve = <T,>(node: T & { $ref?: string }): T => (node.$ref ? resolve(node.$ref.slice(2).split('/').reduce((at, key) => at[key], spec)) : node);

const operations: Array<{ method: string; path: string; operation: Operation; parameters: Parameter[] }> = [];
for (const [path, item] of Object.entries<Record<string, unknown>>(spec.paths)) {
  for (const method of ['get', 'post', 'put', 'delete', 'patch']) {
    const operation = item[method] as Operation | undefined;
    if (!operation) continue;
    const parameters = [...((item.parameters as Parameter[]) ?? []), ...(operation.parameters ?? [])].map((parameter) => resolve(parameter));
    operations.push({ method: method.toUpperCase(), path, operation, parameters });
  }
}

/** Whether a schema takes strings. */
function takesString(schema: Schema | undefined): boolean {
  if (!schema) return false;
  const resolved = resolve(schema);
  const types = ([] as string[]).concat(resolved.type ?? []);
  return types.includes('string') || [...(resolved.anyOf ?? []), ...(resolved.oneOf ?? []), ...(resolved.allOf ?? [])].some(takesString);
}

/** The top-level properties of a body schema, through allOf. */
function properties(schema: Schema | undefined): Record<string, Schema> {
  if (!schema) return {};
  const resolved = resolve(schema);
  return Object.assign({}, resolved.properties ?? {}, ...(resolved.allOf ?? []).map(properties));
}

/** Every leaf of a JSON value, as a path of keys. */
function leaves(value: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(value)) return value.flatMap((item, index) => leaves(item, [...at, index]));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([key, item]) => leaves(item, [...at, key]));
  return [at];
}

function withValue(value: unknown, path: Array<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, unknown>;
  copy[path[0]] = withValue(copy[path[0]], path.slice(1), replacement);
  return copy;
}

const wrongType = (value: unknown): unknown => (typeof value === 'string' ? 12345 : typeof value === 'number' ? 'not a number' : typeof value === 'boolean' ? 'yes' : Array.isArray(value) ? { not: 'an array' } : value === null ? [] : 'not an object');

interface Probe {
  label: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** The status the probe must get, when the rule is that exact. */
  expect?: number;
}

describe.each(backends)('spec probe on %s', (backend) => {
  const t = useTestServer(backend);

  // Hundreds of requests, one after another: on a busy CI machine they take longer than one test's default 30 s.
  it('never answers 5xx, and answers every error with a problem', { timeout: 180_000 }, async () => {
    const { token, api } = await t.as('probe@example.com');
    // Real ids of every kind, so that each probe differs from a valid request in one place only.
    const { data: project } = await api.POST('/projects', { body: { name: 'Probed' } });
    const projectid = project!.id;
    const { data: folder } = await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'Folder' } });
    const { box: file } = (await api.uploadFile(projectid, { name: 'probe.bin', mimeType: 'application/octet-stream' }, new Uint8Array([1, 2, 3]))).data!;
    const { data: player } = await api.POST('/players', { body: { name: 'Probe player', projectid } });
    const { data: pending } = await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: 'later.wav', mimeType: 'audio/wav', size: 10 } });
    const uploadid = new URL(pending!.url).pathname.split('/').pop()!;
    const ids: Record<string, string> = { projectid, fileid: file.id, folderid: folder!.id, parentid: folder!.id, playerid: player!.id, uploadid, objectid: file.id, stackid: file.parentid ?? file.id };
    const realId = (key: string | number, value: unknown) => (typeof key === 'string' && ids[key] && typeof value === 'string' ? ids[key] : value);
    const withRealIds = (value: unknown): unknown =>
      Array.isArray(value) ? value.map((item) => (typeof item === 'string' && /^box_/.test(item) ? file.id : withRealIds(item))) : value !== null && typeof value === 'object' ? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, realId(key, withRealIds(item))])) : value;

    // The same user's browser session, for the operations only a session may call; sent as from the server's own page.
    const origin = new URL(t.server.apiUrl).origin;
    const probeUser = (await t.server.ctx.store.users.findByEmail('probe@example.com'))!;
    await t.server.ctx.store.users.setPasswordHash(probeUser.id, await hashPassword('probing passphrase of the test'));
    const signedIn = await fetch(`${t.server.apiUrl}/auth/signin`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: origin },
      body: JSON.stringify({ email: 'probe@example.com', password: 'probing passphrase of the test' }),
    });
    const session: Record<string, string> = { Cookie: signedIn.headers.getSetCookie()[0].split(';')[0], Origin: origin };

    const probes: Probe[] = [];
    for (const { method, path, operation, parameters } of operations) {
      const auth: Record<string, string> = operation.security?.length === 0 ? {} : sessionOnly(operation) ? session : { Authorization: `Bearer ${token}` };
      const pathWith = (name?: string, value?: string) => path.replace(/\{(\w+)\}/g, (_, param: string) => (param === name ? value! : encodeURIComponent(ids[param] ?? 'x')));
      const query = new URLSearchParams();
      for (const parameter of parameters.filter((p) => p.in === 'query')) query.set(parameter.name, parameter.name === 'signature' ? 'a'.repeat(64) : parameter.name === 'expires' ? '1' : 'x');
      const url = (pathPart: string, search = query.toString()) => `${pathPart}${search ? `?${search}` : ''}`;
      const label = `${operation.operationId} ${method} ${path}`;

      for (const parameter of parameters.filter((p) => p.in === 'path')) {
        probes.push({ label: `${label}: NUL in path {${parameter.name}}`, method, url: url(pathWith(parameter.name, 'x%00y')), headers: auth, expect: 400 });
        probes.push({ label: `${label}: 300 characters in {${parameter.name}}`, method, url: url(pathWith(parameter.name, 'x'.repeat(300))), headers: auth });
      }
      for (const parameter of parameters.filter((p) => p.in === 'query' && takesString(p.schema))) {
        const others = new URLSearchParams(query);
        others.delete(parameter.name);
        probes.push({ label: `${label}: NUL in query ${parameter.name}`, method, url: url(pathWith(), [others.toString(), `${parameter.name}=x%00y`].filter(Boolean).join('&')), headers: auth, expect: 400 });
      }
      if (requiresToken(operation)) probes.push({ label: `${label}: no token`, method, url: url(pathWith()), headers: {}, expect: 401 });

      for (const [mediaType, content] of Object.entries(operation.requestBody?.content ?? {})) {
        const contentType = mediaType.includes('*') ? (mediaType === 'image/*' ? 'image/png' : 'application/octet-stream') : mediaType;
        const send = (what: string, body: string, headers: Record<string, string> = {}, status?: number) =>
          probes.push({ label: `${label}: ${what}`, method, url: url(pathWith()), headers: { ...auth, 'Content-Type': contentType, ...headers }, body, expect: status });
        // A Content-Encoding that lies, on every operation with a body (JSON ones must say 400; uploads store bytes as sent).
        for (const encoding of ['gzip', 'br', 'deflate']) send(`body that is not ${encoding}`, 'plainly not compressed', { 'Content-Encoding': encoding }, mediaType === 'application/json' ? 400 : undefined);
        if (mediaType !== 'application/json') continue;
        const example = content.example ?? Object.values(content.examples ?? {})[0]?.value ?? {};
        const base = withRealIds(example);
        for (const leaf of leaves(base)) {
          send(`NUL in #/${leaf.join('/')}`, JSON.stringify(withValue(base, leaf, 'a\u0000b')), {}, 400);
          const current = leaf.reduce<unknown>((at, key) => (at as Record<string | number, unknown>)[key], base);
          send(`wrong type in #/${leaf.join('/')}`, JSON.stringify(withValue(base, leaf, wrongType(current))));
        }
        for (const [name, schema] of Object.entries(properties(content.schema))) {
          if (takesString(schema)) send(`NUL in #/${name}`, JSON.stringify({ ...(base as object), [name]: 'a\u0000b' }), {}, 400);
          send(`an object in #/${name}`, JSON.stringify({ ...(base as object), [name]: { nested: ['a\u0000b'] } }));
        }
        for (const shape of ['null', '[]', '"text"', '0', '{', '']) send(`a body of ${shape || 'nothing'}`, shape);
      }
    }

    const failures: string[] = [];
    const sent = new Set<string>();
    for (const probe of probes) {
      // The example's fields and the schema's overlap; each distinct request is sent once.
      const key = `${probe.method} ${probe.url} ${JSON.stringify(probe.headers)} ${probe.body}`;
      if (sent.has(key)) continue;
      sent.add(key);
      const response = await t.fetch(probe.url, { method: probe.method, headers: probe.headers, body: probe.body });
      const type = response.headers.get('content-type') ?? '';
      const text = await response.text();
      if (response.status >= 500) failures.push(`${probe.label}: ${response.status} ${text.slice(0, 200)}`);
      else if (response.status >= 400 && !type.startsWith('application/problem+json')) failures.push(`${probe.label}: ${response.status} as ${type}`);
      else if (probe.expect !== undefined && response.status !== probe.expect) failures.push(`${probe.label}: ${response.status}, expected ${probe.expect}: ${text.slice(0, 200)}`);
    }
    expect(sent.size).toBeGreaterThan(250);
    expect(failures).toEqual([]);
  });
});
