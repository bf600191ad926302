/**
 * One door (issue 28): every request is matched once, case-sensitively, to
 * its operation, and a request that matches none is refused before any
 * credential is looked at. The finding was that `POST /api/v1/Me/tokens`
 * (one letter's case changed) skipped every scope check and minted an
 * all-scope token for any app a musician let in.
 *
 * For every operation of the table (generated/operations.ts), on things of
 * the caller's own, this calls the canonical path and its variants: a
 * letter's case changed (in each literal segment), a trailing slash, a
 * `%2e%2e` segment and an empty (`//`) one; each with nothing, a token
 * lacking the operation's scope, a token holding it, and the session. The
 * variants answer 404 (the router's own problem, so no handler ran and no
 * credential was read) and change nothing in the database; the canonical
 * path is matched (it never gets the router's 404). The one exception is a
 * variant that is literally another operation's path, its changed segment
 * falling on that operation's parameter (`POST /me/passkeys/Options` renames
 * the passkey "Options", which nobody has): that operation answers, as its
 * own rules say, and nothing changes either.
 */
import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS, type Operation } from '../../generated/operations.ts';
import { backends } from '../testing/databases.ts';
import { useTestServer } from '../testing/harness.ts';
import { signIn } from '../testing/sessions.ts';
import { SCOPES } from '../testing/spec-scopes.ts';
import { matchOperation } from './route.ts';

const OWNER = 'one-door@example.com';
/** The router's 404 says this, and nothing else does (route.ts unmatchedProblem). */
const ROUTER_404 = 'There is no operation at';

/** Variants of an operation's path (with `fill` giving each parameter's value) that are not that operation's path. */
function variantsOf(template: string, fill: (name: string) => string): Array<[string, string]> {
  const segments = template.split('/');
  const concrete = (list: string[]) => list.map((segment) => segment.replace(/^\{([^}]+)\}$/, (_, name: string) => encodeURIComponent(fill(name)))).join('/');
  const path = concrete(segments);
  const variants: Array<[string, string]> = [];
  segments.forEach((segment, at) => {
    // A letter's case changed in a literal segment (a parameter's value is data, its case the caller's).
    if (at === 0 || segment.startsWith('{') || !/[a-z]/i.test(segment)) return;
    const letter = segment.search(/[a-z]/i);
    const flipped = segment.slice(0, letter) + (segment[letter] === segment[letter].toUpperCase() ? segment[letter].toLowerCase() : segment[letter].toUpperCase()) + segment.slice(letter + 1);
    variants.push([`case of "${segment}"`, concrete([...segments.slice(0, at), flipped, ...segments.slice(at + 1)])]);
  });
  variants.push(['a trailing slash', `${path}/`]);
  variants.push(['a %2e%2e segment', `/${path.split('/')[1]}/%2e%2e${path}`]);
  variants.push(['a dot segment at the end', `${path}/.`]);
  variants.push(['an empty segment', path.replace(/^\//, '//')]);
  return variants;
}

/**
 * Whether `variant` may still be matched to an operation: only to another one, whose template has a parameter where the
 * variant's changed segment is (`POST /me/passkeys/Options` is renamePasskey of the passkey "Options", which nobody has).
 */
function matchedElsewhere(operation: Operation, variant: string): boolean {
  const match = matchOperation(operation.method, variant);
  if (match.kind !== 'operation') return false;
  if (match.operation.path === operation.path) return true;
  const at = operation.path.split('/').findIndex((segment, i) => segment !== variant.split('/')[i] && !segment.startsWith('{'));
  return !match.operation.segments[at - 1]?.startsWith('{');
}

describe('the variants of every path are matched to no operation', () => {
  it.each(OPERATIONS.map((operation) => [`${operation.method} ${operation.path}`, operation] as const))('%s', (_, operation) => {
    expect(matchOperation(operation.method, operation.path.replace(/\{[^}]+\}/g, 'x_1'))).toMatchObject({ kind: 'operation', operation: { id: operation.id } });
    for (const [what, variant] of variantsOf(operation.path, () => 'x_1')) {
      expect(matchedElsewhere(operation, variant), `${what}: ${variant} reaches ${JSON.stringify(matchOperation(operation.method, variant))}`).toBe(false);
    }
  });
});

describe.each(backends)('one door on %s', (backend) => {
  // The rate limits are the rate limit tests' business; this sends a few thousand requests in a burst.
  const t = useTestServer(backend, { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_PER_SECOND: '0' });
  const fixtures: Record<string, string> = {};
  const only = new Map<string, string>();
  const allBut = new Map<string, string>();
  let sessionCookie = '';

  beforeAll(async () => {
    const { api } = await t.as(OWNER);
    const { data: project } = await api.POST('/projects', { body: { name: 'One door' } });
    const { data: uploaded } = await api.uploadFile(project!.id, { name: 'notes.txt', mimeType: 'text/plain' }, new TextEncoder().encode('one door'));
    const { data: player } = await api.POST('/players', { body: { name: 'One door player', projectid: project!.id, collaborators: [{ email: 'door-collaborator@example.com', role: 'viewer' }] } });
    const { data: comment } = await api.POST('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid: project!.id, fileid: uploaded!.box.id } }, body: { message: 'One door' } });
    const { data: webhook } = await api.POST('/webhooks', { body: { url: 'http://127.0.0.1:9/one-door', events: ['comment.created'] } });
    const store = t.server.ctx.store;
    const user = await store.users.findOrCreate(OWNER, Date.now());
    const { data: tokens } = await api.GET('/me/tokens' as never);
    Object.assign(fixtures, {
      projectid: project!.id,
      fileid: uploaded!.box.id,
      playerid: player!.id,
      commentid: comment!.id,
      webhookid: webhook!.id,
      email: 'door-collaborator@example.com',
      userid: user.id,
      tokenid: (tokens as Array<{ id: string }> | undefined)?.[0]?.id ?? 'tok_1',
    });
    for (const scope of SCOPES) {
      only.set(scope, (await store.tokens.create(user.id, `only ${scope}`, Date.now(), { scopes: [scope] })).secret);
      allBut.set(scope, (await store.tokens.create(user.id, `all but ${scope}`, Date.now(), { scopes: SCOPES.filter((other) => other !== scope && other !== scope.replace(/:read$/, ':write')) })).secret);
    }
    // An administrator, so that the administration's own paths are tried by one who may call them.
    await store.db.execute('UPDATE users SET is_admin = 1 WHERE id = $1', [user.id]);
    sessionCookie = (await signIn(t.server, OWNER)).cookie;
  }, 60_000);

  /** How many rows each table holds: what a refused request must leave as it was. */
  async function snapshot(): Promise<Record<string, number>> {
    const db = t.server.ctx.store.db;
    const tables =
      db.dialect === 'sqlite'
        ? await db.query<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        : await db.query<{ name: string }>('SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()');
    const counts: Record<string, number> = {};
    for (const { name } of tables) counts[name] = Number((await db.query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${name}`))[0].n);
    return counts;
  }

  function concretePath(operation: Operation) {
    return operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(fixtures[name] ?? `${name}_1`));
  }

  function callers(operation: Operation): Array<[string, Headers]> {
    const scope = operation.security.scope;
    const withToken = (token: string | undefined) => new Headers(token ? { Authorization: `Bearer ${token}` } : {});
    const list: Array<[string, Headers]> = [['nothing', new Headers()]];
    if (scope) {
      list.push(['a token lacking its scope', withToken(allBut.get(scope))]);
      list.push(['a token holding its scope', withToken(only.get(scope))]);
    } else {
      list.push(['a token of every scope', withToken(only.get('account:write'))]);
    }
    list.push(['the session', new Headers({ Cookie: sessionCookie, 'Sec-Fetch-Site': 'same-origin' })]);
    return list;
  }

  /**
   * Sends the request with its path exactly as given. Not fetch: the WHATWG URL parser resolves `%2e%2e` and `.`
   * segments before a request is sent ("a double-dot URL path segment … is '..' or an ASCII case-insensitive match
   * for '.%2e', '%2e.', or '%2e%2e'"), so fetch never sends what an attacker's own client can.
   */
  function send(operation: Operation, path: string, headers: Headers): Promise<{ status: number; headers: Headers; text(): Promise<string> }> {
    const api = new URL(t.server.apiUrl);
    const body = operation.body === 'json' && operation.method !== 'GET' && operation.method !== 'HEAD' ? '{}' : undefined;
    const sent: Record<string, string> = Object.fromEntries(headers.entries());
    if (body !== undefined) Object.assign(sent, { 'content-type': 'application/json', 'content-length': String(body.length) });
    return new Promise((answered, failed) => {
      const request = httpRequest({ host: api.hostname, port: api.port, method: operation.method, path: `${api.pathname}${path}`, headers: sent }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const answer = new Headers();
          for (const [name, value] of Object.entries(response.headers)) if (value !== undefined) answer.set(name, Array.isArray(value) ? value.join(', ') : value);
          answered({ status: response.statusCode ?? 0, headers: answer, text: async () => Buffer.concat(chunks).toString('utf8') });
        });
        response.on('error', failed);
      });
      request.on('error', failed);
      request.end(body);
    });
  }

  it('refuses every variant of every operation with the router\'s 404, for every caller, and changes nothing', async () => {
    const before = await snapshot();
    const faults: string[] = [];
    for (const operation of OPERATIONS) {
      for (const [what, variant] of variantsOf(operation.path, (name) => fixtures[name] ?? `${name}_1`)) {
        // Another operation's parameter, where the letter changed: that operation's own 404 (no such id), checked below.
        const elsewhere = matchOperation(operation.method, variant).kind === 'operation';
        for (const [who, headers] of callers(operation)) {
          const response = await send(operation, variant, headers);
          const text = operation.method === 'HEAD' ? '' : await response.text();
          // Another operation's own answer (its 401, or its 404 for an id nobody has) where the variant is its path; else the router's 404.
          if (!elsewhere && response.status !== 404) faults.push(`${operation.id} ${what} (${variant}) with ${who}: ${response.status} ${text.slice(0, 120)}`);
          else if (!elsewhere && operation.method !== 'HEAD' && !text.includes(ROUTER_404) && !text.includes('There is nothing at')) faults.push(`${operation.id} ${what} with ${who}: a 404 not the router's: ${text.slice(0, 160)}`);
          // No credential was looked at: nothing asks for one, and nothing names a scope.
          if (!elsewhere && response.headers.get('www-authenticate')) faults.push(`${operation.id} ${what} with ${who}: a challenge (${response.headers.get('www-authenticate')})`);
        }
      }
    }
    expect(faults).toEqual([]);
    expect(await snapshot()).toEqual(before);
  }, 300_000);

  it('matches the canonical path of every operation: no caller gets the router\'s 404 there', async () => {
    const faults: string[] = [];
    for (const operation of OPERATIONS) {
      // Deletes last would still change the fixtures the others read; the canonical calls here read only.
      if (operation.method !== 'GET' && operation.method !== 'HEAD' && operation.method !== 'OPTIONS') continue;
      for (const [who, headers] of callers(operation)) {
        const response = await send(operation, concretePath(operation), headers);
        const text = operation.method === 'HEAD' ? '' : await response.text();
        if (text.includes(ROUTER_404)) faults.push(`${operation.id} with ${who}: the router refused its own path`);
      }
    }
    expect(faults).toEqual([]);
  }, 120_000);

  it('refuses a token on a path the API does not know before reading it: an unknown token gets 404, not 401', async () => {
    for (const path of ['/Me/tokens', '/me/Tokens', '/me/tokens/', '/ME/passkeys', '/Admin/invitations', '/Portal/pl_1/tus']) {
      const response = await fetch(`${t.server.apiUrl}${path}`, { method: 'POST', headers: { Authorization: 'Bearer not-a-token', 'Content-Type': 'application/json' }, body: '{}' });
      expect(response.status, path).toBe(404);
      expect(response.headers.get('www-authenticate'), path).toBeNull();
      // The portal's tus endpoints send no CORS header (http/cors.ts); a variant of their path is no portal either.
      expect(response.headers.get('content-type'), path).toMatch(/^application\/problem\+json/);
    }
  });
});
