/**
 * `npm run check:layers`: the import rules that keep the layout true to the
 * architecture, checked over every TypeScript file git knows.
 *
 * 1. The server is ranked in floors, and a file imports only from its own
 *    floor and those below, **type-only imports included** (a type that
 *    points up is a dependency that points up):
 *      1 lib            ids, clock, crypto, the problem catalogue, addresses
 *      2 platform       store, blobs, mail, audio, payments, jobs
 *      3 auth           the access policy, authorize, scopes, passwords
 *      4 signing        signed URLs and player grants (which name permissions)
 *      5 http           the request path: route, authentication, validation, dispatch
 *      6 resources      one folder per resource
 *      7 pages          the HTML shells and their routes
 *      8 root           the composition root, entry points, the admin CLI
 *    Some modules declare shapes others may name by type: the settings
 *    (server/config.ts), any floor; the composition's ports (server/context.ts
 *    and server/repositories.ts, from which each resource picks the parts it
 *    uses), the resources and above. A value imported from them still
 *    follows the floors, and a lower floor names neither.
 * 2. web/ holds browser code only: it imports from web/, generated/ and
 *    shared/, never server/, scripts/ or node: modules. shared/ holds code the
 *    browser and the server both run, and imports only shared/. The server
 *    never imports web/.
 * 3. Production code imports no test code (server/testing/, *.test.ts,
 *    *-test-helpers.ts, web/testing/).
 * 4. No production files import each other round a circle, types included
 *    (but through the three shape modules of rule 1): a cycle makes the
 *    order modules start in a matter of luck, and a type cycle hides a
 *    dependency that points both ways.
 * 5. The audio worker (worker-main.ts) does not load the HTTP app.
 * 6. The resources (server/resources/<name>/) depend on each other in one
 *    direction: no two import each other, directly or round a circle, even
 *    types. (Listening uses players and downloads uses listening, never the
 *    reverse.)
 * 7. Below the handlers there is no Express (issue 28, "One door"): a
 *    production file of server/resources/ imports nothing from 'express', not
 *    even a type, unless it is a handler module (*-handlers.ts), a tus
 *    module (*-tus.ts) or a route module (*-routes.ts), which are where a
 *    request is read and a response written. The route modules are Express
 *    routers by nature: MCP's (mcp/mcp-routes.ts), single sign-on's
 *    (sso/oidc-routes.ts) and tus's (tus/tus-routes.ts). Services take a
 *    caller, plain inputs and RequestFacts (server/lib/request-facts.ts), and
 *    answer data, a Reply where they set cookies or headers.
 *
 * Exits 1 with every breach listed, or 0 saying how many files it read.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

export interface ImportEdge {
  from: string;
  to: string;
  /** Whether it survives type erasure: an import of a value, not `import type`. */
  runtime: boolean;
  /** A worker thread's entry (new URL(…, import.meta.url)): loaded at run time, but as a module graph of its own. */
  thread?: boolean;
}

const root = resolve(import.meta.dirname, '..');

/** The packages whose imports are recorded too (rule 7), by their bare name; other packages are not. */
const WATCHED_PACKAGES: ReadonlySet<string> = new Set(['express']);

/**
 * The local imports of a file (relative specifiers), resolved to repository
 * paths, and its imports of the watched packages (`to` their bare name, which
 * no folder rule matches).
 */
export function importsOf(file: string, source: string): ImportEdge[] {
  const parsed = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, false, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const edges: ImportEdge[] = [];
  const add = (specifier: string, runtime: boolean, thread = false) => {
    if (WATCHED_PACKAGES.has(specifier)) {
      edges.push({ from: file, to: specifier, runtime });
      return;
    }
    if (!specifier.startsWith('.')) return;
    edges.push({ from: file, to: relative(root, resolve(root, dirname(file), specifier)), runtime, ...(thread ? { thread } : {}) });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      // `import type {…}`, or `import { type A, type B }` with nothing else: erased entirely.
      const typeOnly =
        !!clause &&
        (clause.isTypeOnly ||
          (!clause.name && !!clause.namedBindings && ts.isNamedImports(clause.namedBindings) && clause.namedBindings.elements.length > 0 && clause.namedBindings.elements.every((element) => element.isTypeOnly)));
      add(node.moduleSpecifier.text, !typeOnly);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, !node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      add(node.arguments[0].text, true);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal) && WATCHED_PACKAGES.has(node.argument.literal.text)) {
      // import('express').Request, in a type: a type-only import of the package.
      add(node.argument.literal.text, false);
    } else if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'URL' && node.arguments?.[0] && ts.isStringLiteral(node.arguments[0])) {
      // new URL('./thread.ts', import.meta.url): a worker thread's entry, loaded at run time.
      const [target, base] = node.arguments;
      if (base && base.getText(parsed) === 'import.meta.url' && /\.(ts|js|mjs)$/.test(target.text)) add(target.text, true, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(parsed);
  return edges;
}

/** The floors of the server, lowest first (rule 1). */
export const FLOORS: ReadonlyArray<{ name: string; folders: readonly string[] }> = [
  { name: 'lib', folders: ['server/lib/'] },
  { name: 'platform', folders: ['server/store/', 'server/blobs/', 'server/mail/', 'server/audio/', 'server/payments/', 'server/jobs/'] },
  { name: 'auth', folders: ['server/auth/'] },
  { name: 'signing', folders: ['server/signing/'] },
  { name: 'http', folders: ['server/http/'] },
  { name: 'resources', folders: ['server/resources/'] },
  { name: 'pages', folders: ['server/pages/'] },
  { name: 'root', folders: ['server/'] },
];
/** The settings, which every floor may name by type; and the composition's ports, which the resources and above may (rule 1). */
const SETTINGS = 'server/config.ts';
const PORTS = new Set(['server/context.ts', 'server/repositories.ts']);
const SHAPES = new Set([SETTINGS, ...PORTS]);
const RESOURCES_FLOOR = 5;
const isTest = (file: string) => /\.test\.ts$|(^|\/)testing\/|-test-helpers\.ts$|\.conformance\.ts$/.test(file);
const isProduction = (file: string) => /^(server|web|mock|shared)\//.test(file) && !isTest(file);
/** The modules of server/resources/ that read requests and write responses, and so may name Express (rule 7). */
const isHttpEdge = (file: string) => /-(handlers|routes|tus)\.ts$/.test(file);

/** The floor of a server file (its index in FLOORS), or undefined outside the server. */
export function floorOf(file: string): number | undefined {
  const at = FLOORS.findIndex(({ folders }) => folders.some((folder) => file.startsWith(folder)));
  return at < 0 ? undefined : at;
}

/** Every breach of the rules in these edges (the files' imports), as lines for a reader. */
export function breaches(edges: ImportEdge[]): string[] {
  const found: string[] = [];
  for (const { from, to, runtime } of edges) {
    const [below, above] = [floorOf(to), floorOf(from)];
    const shape = !runtime && (to === SETTINGS || (PORTS.has(to) && above !== undefined && above >= RESOURCES_FLOOR));
    if (isProduction(from) && isProduction(to) && below !== undefined && above !== undefined && below > above && !shape) {
      found.push(`floors: ${from} (${FLOORS[above].name}) imports ${to} (${FLOORS[below].name}, above it)${runtime ? '' : ', a type'}; move what both need down, or take the narrow port it uses`);
    }
    if (from.startsWith('web/') && !isTest(from) && !to.startsWith('web/') && !to.startsWith('generated/') && !to.startsWith('shared/')) {
      found.push(`web: ${from} imports ${to}; web/ holds browser code only (code the server runs too belongs in shared/)`);
    }
    if (from.startsWith('shared/') && !to.startsWith('shared/')) found.push(`shared: ${from} imports ${to}; shared/ imports only shared/`);
    if (isProduction(from) && from.startsWith('server/') && to.startsWith('web/')) found.push(`web: ${from} imports ${to}; the server never imports web/ (move what both run to shared/)`);
    if (isProduction(from) && isTest(to)) found.push(`tests: ${from} (production) imports ${to}, test code`);
    if (to === 'express' && isProduction(from) && from.startsWith('server/resources/') && !isHttpEdge(from)) {
      found.push(
        `express: ${from} imports 'express'${runtime ? '' : ', a type'}; below the handlers a service takes a caller, plain inputs and RequestFacts (server/lib/request-facts.ts) and answers data (a Reply for cookies and headers), which its *-handlers.ts reads and writes`,
      );
    }
  }
  const graph = (withThreads: boolean, withTypes: boolean) => {
    const runtime = new Map<string, string[]>();
    for (const { from, to, runtime: kept, thread } of edges) {
      if ((!kept && (!withTypes || SHAPES.has(to))) || (thread && !withThreads) || !isProduction(from) || !isProduction(to)) continue;
      runtime.set(from, [...(runtime.get(from) ?? []), to]);
    }
    return runtime;
  };
  // A thread's entry is a module graph of its own: a thread that imports back what starts it is no cycle.
  for (const cycle of cycles(graph(false, true))) found.push(`cycle: ${[...cycle, cycle[0]].join(' → ')}`);
  const resourceOf = (file: string) => /^server\/resources\/([^/]+)\//.exec(file)?.[1];
  const resources = new Map<string, string[]>();
  for (const { from, to } of edges) {
    const [a, b] = [resourceOf(from), resourceOf(to)];
    if (a && b && a !== b && isProduction(from) && isProduction(to)) resources.set(a, [...new Set([...(resources.get(a) ?? []), b])]);
  }
  for (const cycle of cycles(resources)) found.push(`resources: ${[...cycle, cycle[0]].join(' → ')} depend on each other; move what both need to one of them or a lower layer`);
  const fromWorker = reachable(graph(true, false), 'server/worker-main.ts');
  if (fromWorker.has('server/app.ts')) found.push('worker: server/worker-main.ts loads server/app.ts (the HTTP app) at run time');
  return found;
}

function reachable(graph: Map<string, string[]>, start: string): Set<string> {
  const seen = new Set<string>();
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    queue.push(...(graph.get(file) ?? []));
  }
  return seen;
}

/** The strongly connected components of more than one file, or of one that imports itself (Tarjan's algorithm). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  const connect = (file: string) => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const to of graph.get(file) ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(file, Math.min(low.get(file)!, index.get(to)!));
      }
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || (graph.get(file) ?? []).includes(file)) components.push(component.reverse());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) connect(file);
  return components;
}

if (import.meta.main) {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts', '*.tsx'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((file) => file && !file.startsWith('generated/') && existsSync(join(root, file)));
  const edges = files.flatMap((file) => importsOf(file, readFileSync(join(root, file), 'utf8')));
  const found = breaches(edges);
  if (found.length > 0) {
    console.error(`${found.length} import rule${found.length === 1 ? '' : 's'} broken (scripts/check-layers.ts says why each rule holds):\n  ${found.join('\n  ')}`);
    process.exit(1);
  }
  console.log(`Import rules hold over ${files.length} files: the server's ${FLOORS.length} floors point down (types too), web/ is browser code, shared/ is shared, no test code in production, no cycle, no Express below the handlers.`);
}
