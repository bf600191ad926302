/**
 * The changelog partners read at /docs/changelog: what changed from each
 * released spec (openapi/released/, releases.ts) to the next, and what the
 * current spec changes since the newest release, with what is deprecated
 * and until when. `npm run generate` writes it to generated/changelog.html;
 * the server serves that file (server/http/served-docs.ts).
 *
 * The differences are found here, over the bundled documents, operation by
 * operation: operations and webhook events added; parameters, request
 * fields, response fields, response headers and answers (statuses) added;
 * what became deprecated; and the breaking changes, as the breaking-change
 * gate finds them (diff.ts), removals among them. Text and examples are not
 * changes. The same change made to several operations (a new header on
 * every POST) is one entry, naming them all.
 */
import { breakingChanges, type Json, type JsonObject } from './diff.ts';

const isObject = (value: Json | undefined): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

export type ChangeKind = 'breaking' | 'deprecated' | 'added';

/** One change: its kind, a line for people (`code` between backticks), and the operations it concerns, by operationId. */
export interface Change {
  kind: ChangeKind;
  text: string;
  operations: string[];
}

/** A new operation, listed on its own line under its tag. */
export interface NewOperation {
  operationId: string;
  method: string;
  path: string;
  summary: string;
  tag: string;
}

export interface Changes {
  operations: NewOperation[];
  events: string[];
  changes: Change[];
}

/** Something deprecated in a spec, with its days (YYYY-MM-DD, as written) and the operations it is in, for the table of deprecations. */
export interface DeprecatedItem {
  what: string;
  operations: string[];
  since?: string;
  sunset?: string;
}

interface Operation {
  key: string;
  operationId: string;
  method: string;
  path: string;
  node: JsonObject;
  item: JsonObject;
}

/** Follows local `$ref`s (a bundle has no others); a $ref's siblings (OpenAPI 3.1) stand beside what it names. */
function resolver(document: JsonObject) {
  return (node: Json | undefined): Json | undefined => {
    const seen = new Set<string>();
    while (isObject(node) && typeof node.$ref === 'string' && node.$ref.startsWith('#/') && !seen.has(node.$ref)) {
      seen.add(node.$ref);
      const target = node.$ref
        .slice(2)
        .split('/')
        .reduce<Json | undefined>((at, part) => (isObject(at) ? at[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined), document);
      const { $ref: _ref, ...siblings } = node;
      node = isObject(target) ? { ...target, ...siblings } : target;
    }
    return node;
  };
}

function operationsOf(document: JsonObject): Map<string, Operation> {
  const resolve = resolver(document);
  const found = new Map<string, Operation>();
  for (const [path, itemAt] of Object.entries(isObject(document.paths) ? document.paths : {})) {
    const item = resolve(itemAt);
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const node = item[method];
      if (!isObject(node)) continue;
      const key = `${method.toUpperCase()} ${path}`;
      found.set(key, { key, operationId: typeof node.operationId === 'string' ? node.operationId : key, method: method.toUpperCase(), path, node, item });
    }
  }
  return found;
}

/** The schema of a body or response: its JSON media type's, else its first. */
function schemaOf(resolve: (node: Json | undefined) => Json | undefined, holder: Json | undefined): Json | undefined {
  const resolved = resolve(holder);
  if (!isObject(resolved) || !isObject(resolved.content)) return undefined;
  const media = Object.entries(resolved.content).find(([type]) => /json/.test(type))?.[1] ?? Object.values(resolved.content)[0];
  return isObject(media) ? media.schema : undefined;
}

/** Every field under a schema, by its path (`options.quality`, `items[].id`), with its schema; unions and allOf included, cycles cut. */
function fieldsOf(resolve: (node: Json | undefined) => Json | undefined, schemaAt: Json | undefined, prefix = '', stack: JsonObject[] = []): Map<string, JsonObject> {
  const fields = new Map<string, JsonObject>();
  const schema = resolve(schemaAt);
  if (!isObject(schema) || stack.includes(schema) || stack.length > 8) return fields;
  const inner = [...stack, schema];
  for (const keyword of ['allOf', 'oneOf', 'anyOf']) {
    const members = schema[keyword];
    if (Array.isArray(members)) for (const member of members) for (const [path, field] of fieldsOf(resolve, member, prefix, inner)) if (!fields.has(path)) fields.set(path, field);
  }
  if (isObject(schema.properties)) {
    for (const [name, propertyAt] of Object.entries(schema.properties)) {
      const property = resolve(propertyAt);
      if (!isObject(property)) continue;
      const path = prefix ? `${prefix}.${name}` : name;
      fields.set(path, property);
      for (const [deeper, field] of fieldsOf(resolve, property, path, inner)) if (!fields.has(deeper)) fields.set(deeper, field);
    }
  }
  if (schema.items !== undefined) for (const [path, field] of fieldsOf(resolve, schema.items, `${prefix}[]`, inner)) if (!fields.has(path)) fields.set(path, field);
  return fields;
}

function parametersOf(resolve: (node: Json | undefined) => Json | undefined, operation: Operation): Map<string, JsonObject> {
  const parameters = new Map<string, JsonObject>();
  for (const list of [operation.item.parameters, operation.node.parameters]) {
    if (!Array.isArray(list)) continue;
    for (const parameterAt of list) {
      const parameter = resolve(parameterAt);
      if (!isObject(parameter) || typeof parameter.name !== 'string' || typeof parameter.in !== 'string') continue;
      parameters.set(`${parameter.in} ${parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name}`, parameter);
    }
  }
  return parameters;
}

/** The responses of an operation, by status. */
const responsesOf = (operation: Operation): JsonObject => (isObject(operation.node.responses) ? operation.node.responses : {});

/** A deprecation's days, as written in the spec (a YAML date may come out of the bundle as a full ISO time). */
function daysOf(node: JsonObject): { since?: string; sunset?: string } {
  const day = (value: Json | undefined) => (typeof value === 'string' ? value.slice(0, 10) : undefined);
  return { since: day(node['x-deprecated-since']), sunset: day(node['x-sunset']) };
}

function deprecationText(what: string, node: JsonObject): string {
  const { since, sunset } = daysOf(node);
  return `${what} is deprecated${since ? ` since ${since}` : ''}${sunset ? `; it stops working on ${sunset}` : ''}`;
}

/** The first sentence of a description, for a line. */
function firstSentence(text: Json | undefined): string {
  if (typeof text !== 'string') return '';
  const flat = text.replace(/\s+/g, ' ').trim();
  const end = flat.search(/[.:](\s|$)/);
  return end > 0 ? flat.slice(0, end) : flat;
}

/** The components (`#/components/schemas/Thing`…) an operation refers to, directly or through other components. */
function componentsUnder(document: JsonObject, node: Json): string[] {
  const found = new Set<string>();
  const visit = (at: Json | undefined) => {
    if (Array.isArray(at)) for (const item of at) visit(item);
    else if (isObject(at)) {
      if (typeof at.$ref === 'string' && at.$ref.startsWith('#/components/')) {
        const component = at.$ref.split('/').slice(0, 4).join('/');
        if (!found.has(component)) {
          found.add(component);
          visit(component.slice(2).split('/').reduce<Json | undefined>((inner, part) => (isObject(inner) ? inner[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined), document));
        }
      }
      for (const [key, value] of Object.entries(at)) if (key !== '$ref') visit(value);
    }
  };
  visit(node);
  return [...found];
}

/** The field a path is in (`options` for `options.quality`, `[]` for `[].id`), or undefined at the top. */
const parentOf = (path: string): string | undefined => {
  const cut = Math.max(path.lastIndexOf('.'), path.endsWith('[]') ? path.length - 2 : -1);
  return cut > 0 ? path.slice(0, cut) : undefined;
};

/** The fields of `after` not in `before`, without those inside a new field (a new object is one change, not one per member). */
function newFields(before: Map<string, JsonObject>, after: Map<string, JsonObject>): string[] {
  const added = [...after.keys()].filter((path) => !before.has(path));
  const addedSet = new Set(added);
  return added.filter((path) => {
    for (let parent = parentOf(path); parent !== undefined; parent = parentOf(parent)) if (addedSet.has(parent)) return false;
    return true;
  });
}

/** Every change from `base` to `revision`. */
export function changesBetween(base: JsonObject, revision: JsonObject): Changes {
  const resolveBase = resolver(base);
  const resolveRevision = resolver(revision);
  const before = operationsOf(base);
  const after = operationsOf(revision);
  const grouped = new Map<string, Change>();
  const note = (kind: ChangeKind, text: string, operationId?: string) => {
    const key = `${kind}\n${text}`;
    const change = grouped.get(key) ?? { kind, text, operations: [] };
    if (operationId && !change.operations.includes(operationId)) change.operations.push(operationId);
    grouped.set(key, change);
  };

  const operations: NewOperation[] = [];
  for (const [key, operation] of after) {
    const old = before.get(key);
    if (!old) {
      const tags = operation.node.tags;
      operations.push({
        operationId: operation.operationId,
        method: operation.method,
        path: operation.path,
        summary: typeof operation.node.summary === 'string' ? operation.node.summary : '',
        tag: Array.isArray(tags) && typeof tags[0] === 'string' ? tags[0] : 'Other',
      });
      if (operation.node.deprecated === true) note('deprecated', deprecationText(`\`${key}\``, operation.node), operation.operationId);
      continue;
    }
    const id = operation.operationId;
    if (operation.node.deprecated === true && old.node.deprecated !== true) note('deprecated', deprecationText(`\`${key}\``, operation.node), id);

    const oldParameters = parametersOf(resolveBase, old);
    for (const [name, parameter] of parametersOf(resolveRevision, operation)) {
      const was = oldParameters.get(name);
      const label = `${parameter.in} parameter \`${parameter.name}\``;
      // A new required parameter is a breaking change, listed as one.
      if (!was && parameter.required !== true) note('added', `New optional ${label}`, id);
      if (parameter.deprecated === true && was?.deprecated !== true) note('deprecated', deprecationText(`The ${label}`, parameter), id);
    }

    const oldRequest = fieldsOf(resolveBase, schemaOf(resolveBase, old.node.requestBody));
    const request = fieldsOf(resolveRevision, schemaOf(resolveRevision, operation.node.requestBody));
    for (const path of newFields(oldRequest, request)) note('added', `New request field \`${path}\``, id);
    for (const [path, field] of request) {
      if (field.deprecated === true && oldRequest.get(path)?.deprecated !== true) note('deprecated', deprecationText(`The request field \`${path}\``, field), id);
    }

    const oldResponses = responsesOf(old);
    for (const [status, responseAt] of Object.entries(responsesOf(operation))) {
      const response = resolveRevision(responseAt);
      if (!isObject(response)) continue;
      if (!(status in oldResponses)) {
        // A new success status is breaking (diff.ts); a new error is an answer clients may now meet.
        if (!/^2/.test(status)) note('added', `May now answer ${status}: ${firstSentence(response.description)}`, id);
        continue;
      }
      if (!/^2/.test(status)) continue;
      const oldResponse = resolveBase(oldResponses[status]);
      if (!isObject(oldResponse)) continue;
      const oldHeaders = new Set(Object.keys(isObject(oldResponse.headers) ? oldResponse.headers : {}).map((name) => name.toLowerCase()));
      for (const name of Object.keys(isObject(response.headers) ? response.headers : {})) if (!oldHeaders.has(name.toLowerCase())) note('added', `New response header \`${name}\` (${status})`, id);
      const oldFields = fieldsOf(resolveBase, schemaOf(resolveBase, oldResponse));
      const fields = fieldsOf(resolveRevision, schemaOf(resolveRevision, response));
      for (const path of newFields(oldFields, fields)) note('added', `New response field \`${path}\``, id);
      for (const [path, field] of fields) {
        if (field.deprecated === true && oldFields.get(path)?.deprecated !== true) note('deprecated', deprecationText(`The response field \`${path}\``, field), id);
      }
    }
  }

  const oldEvents = new Set(Object.keys(isObject(base.webhooks) ? base.webhooks : {}));
  const events = Object.keys(isObject(revision.webhooks) ? revision.webhooks : {}).filter((name) => !oldEvents.has(name));

  // The breaking changes, as the gate finds them, each on the operations its pointer is under: the operation's own, or a
  // component's (a shared schema), which is under every operation that refers to it.
  const owners = [...before.values()].map((operation) => ({
    operationId: operation.operationId,
    pointers: [`#/paths/${operation.path.replace(/~/g, '~0').replace(/\//g, '~1')}/${operation.method.toLowerCase()}`, ...componentsUnder(base, operation.node)],
  }));
  for (const { path, message } of breakingChanges(base, revision)) {
    const text = message.charAt(0).toUpperCase() + message.slice(1);
    const under = owners.filter(({ pointers }) => pointers.some((pointer) => path === pointer || path.startsWith(`${pointer}/`)));
    if (under.length === 0) note('breaking', text);
    for (const { operationId } of under) note('breaking', text, operationId);
  }

  const order: ChangeKind[] = ['breaking', 'deprecated', 'added'];
  const changes = [...grouped.values()].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind) || b.operations.length - a.operations.length || a.text.localeCompare(b.text));
  return { operations, events, changes };
}

/** Everything deprecated in a spec: operations, parameters, request and response fields. */
export function deprecatedIn(document: JsonObject): DeprecatedItem[] {
  const resolve = resolver(document);
  const items: DeprecatedItem[] = [];
  const add = (what: string, node: JsonObject, operationId: string) => {
    if (node.deprecated !== true) return;
    const days = daysOf(node);
    const same = items.find((item) => item.what === what && item.since === days.since && item.sunset === days.sunset);
    if (!same) items.push({ what, operations: [operationId], ...days });
    else if (!same.operations.includes(operationId)) same.operations.push(operationId);
  };
  for (const operation of operationsOf(document).values()) {
    const id = operation.operationId;
    add(`\`${operation.key}\``, operation.node, id);
    for (const parameter of parametersOf(resolve, operation).values()) add(`The ${parameter.in} parameter \`${parameter.name}\``, parameter, id);
    for (const [path, field] of fieldsOf(resolve, schemaOf(resolve, operation.node.requestBody))) add(`The request field \`${path}\``, field, id);
    for (const [status, response] of Object.entries(responsesOf(operation))) {
      if (!/^2/.test(status)) continue;
      for (const [path, field] of fieldsOf(resolve, schemaOf(resolve, response))) add(`The response field \`${path}\``, field, id);
    }
  }
  return items;
}

// ── The page ────────────────────────────────────────────────────────────────

const escaped = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');
/** A line of a change: escaped, with `code` marked up. */
const marked = (text: string) => escaped(text).replace(/`([^`]+)`/g, '<code>$1</code>');
const anchorOf = (version: string) => `v${version.replace(/[^0-9A-Za-z.-]/g, '-')}`;

export interface ChangelogRelease {
  version: string;
  date: string;
  notes?: string;
  spec: JsonObject;
}

const STYLE = `
:root { color-scheme: light; --ink: #1f2328; --muted: #57606a; --line: #d0d7de; --accent: #0b5cad; --warn: #8a1c1c; --soft: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #fff; }
header, main, footer { max-width: 60rem; margin: 0 auto; padding: 0 1.25rem; }
header { padding-top: 1rem; }
a { color: var(--accent); }
h1 { font-size: 2rem; margin: 1rem 0 .5rem; }
h2 { font-size: 1.5rem; margin: 2.5rem 0 .25rem; padding-top: .5rem; border-top: 1px solid var(--line); }
h3 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
h4 { font-size: 1rem; margin: 1rem 0 .25rem; color: var(--muted); }
.date { font-weight: normal; color: var(--muted); font-size: 1rem; }
ul { padding-left: 1.25rem; }
li { margin: .3rem 0; }
code { font: .9em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--soft); padding: 0 .2em; border-radius: 3px; overflow-wrap: anywhere; }
.ops { color: var(--muted); font-size: .9rem; overflow-wrap: anywhere; }
.breaking { color: var(--warn); font-weight: 600; }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; }
table { border-collapse: collapse; width: 100%; table-layout: fixed; }
th, td { text-align: left; vertical-align: top; padding: .4rem .5rem; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
th:nth-child(1) { width: 34%; } th:nth-child(2) { width: 38%; } th:nth-child(3), th:nth-child(4) { width: 14%; }
th { font-size: .9rem; color: var(--muted); }
footer { margin: 3rem auto 2rem; color: var(--muted); font-size: .9rem; }
@media (max-width: 40rem) { body { font-size: 15px; } h1 { font-size: 1.6rem; } table, thead, tbody, tr, th, td { display: block; width: auto; } thead { position: absolute; left: -9999px; } td { border: 0; padding: .1rem 0; } tr { border-bottom: 1px solid var(--line); padding: .5rem 0; } td::before { content: attr(data-label) ": "; color: var(--muted); } }
`;

function changeItem(change: Change): string {
  const ops = change.operations.length > 0 ? ` <span class="ops">(${change.operations.length > 1 ? `${change.operations.length} operations: ` : ''}${change.operations.map((id) => `<code>${escaped(id)}</code>`).join(', ')})</span>` : '';
  const label = change.kind === 'breaking' ? '<span class="breaking">Breaking:</span> ' : '';
  return `<li>${label}${marked(change.text)}${ops}</li>`;
}

function changesSection({ operations, events, changes }: Changes): string {
  const parts: string[] = [];
  const of = (kind: ChangeKind) => changes.filter((change) => change.kind === kind);
  if (of('breaking').length > 0) parts.push(`<h3>Breaking changes</h3>\n<ul>\n${of('breaking').map(changeItem).join('\n')}\n</ul>`);
  if (of('deprecated').length > 0) parts.push(`<h3>Deprecated</h3>\n<ul>\n${of('deprecated').map(changeItem).join('\n')}\n</ul>`);
  if (operations.length > 0) {
    const tags = [...new Set(operations.map((operation) => operation.tag))].sort();
    const byTag = tags.map((tag) => {
      const items = operations
        .filter((operation) => operation.tag === tag)
        .map((operation) => `<li><code>${escaped(`${operation.method} ${operation.path}`)}</code> ${escaped(operation.summary)} <span class="ops">(<code>${escaped(operation.operationId)}</code>)</span></li>`);
      return `<h4>${escaped(tag)}</h4>\n<ul>\n${items.join('\n')}\n</ul>`;
    });
    parts.push(`<h3>New operations (${operations.length})</h3>\n${byTag.join('\n')}`);
  }
  if (events.length > 0) parts.push(`<h3>New webhook events</h3>\n<ul>\n${events.map((name) => `<li><code>${escaped(name)}</code></li>`).join('\n')}\n</ul>`);
  if (of('added').length > 0) parts.push(`<h3>Added to existing operations</h3>\n<ul>\n${of('added').map(changeItem).join('\n')}\n</ul>`);
  return parts.length > 0 ? parts.join('\n') : '<p>No change to the API.</p>';
}

function deprecationsSection(items: DeprecatedItem[]): string {
  const body =
    items.length === 0
      ? '<p>Nothing is deprecated.</p>'
      : `<table>
<thead><tr><th scope="col">What</th><th scope="col">In</th><th scope="col">Deprecated since</th><th scope="col">Stops working on</th></tr></thead>
<tbody>
${items
  .map(
    (item) =>
      `<tr><td data-label="What">${marked(item.what)}</td><td data-label="In">${item.operations.map((id) => `<code>${escaped(id)}</code>`).join(', ')}</td><td data-label="Deprecated since">${escaped(item.since ?? '')}</td><td data-label="Stops working on">${escaped(item.sunset ?? 'not set')}</td></tr>`,
  )
  .join('\n')}
</tbody>
</table>`;
  return `<section id="deprecations" aria-labelledby="deprecations-title">
<h2 id="deprecations-title">Deprecated now</h2>
<p>A request that uses any of these (calls the operation, or sends the parameter or field) is answered with a <code>Deprecation</code> header, the day it was deprecated, and, once a day is set, a <code>Sunset</code> header, the day it stops working.</p>
${body}
</section>`;
}

/**
 * The page: what is deprecated in `current`, what `current` changes since
 * the newest release (when anything), then each release, newest first, with
 * what it changed from the one before. `releases` are newest first.
 */
export function renderChangelog(releases: ChangelogRelease[], current: JsonObject): string {
  const title = isObject(current.info) && typeof current.info.title === 'string' ? current.info.title : 'API';
  const currentVersion = isObject(current.info) && typeof current.info.version === 'string' ? current.info.version : '';
  const sections: string[] = [];
  const nav: string[] = ['<li><a href="#deprecations">Deprecated now</a></li>'];
  const newest = releases[0];
  if (newest) {
    const pending = changesBetween(newest.spec, current);
    if (pending.operations.length + pending.events.length + pending.changes.length > 0) {
      nav.push('<li><a href="#unreleased">Not yet released</a></li>');
      sections.push(`<section id="unreleased" aria-labelledby="unreleased-title">
<h2 id="unreleased-title">Since ${escaped(newest.version)}, not yet released</h2>
<p>What this server's API (version ${escaped(currentVersion)} of the document) has that release ${escaped(newest.version)} did not. These changes are additive unless marked breaking.</p>
${changesSection(pending)}
</section>`);
    }
  }
  releases.forEach((release, i) => {
    const previous = releases[i + 1];
    const anchor = anchorOf(release.version);
    nav.push(`<li><a href="#${anchor}">${escaped(release.version)}</a></li>`);
    const count = operationsOf(release.spec).size;
    const body = previous ? changesSection(changesBetween(previous.spec, release.spec)) : `<p>The first release: ${count} operations.</p>`;
    sections.push(`<section id="${anchor}" aria-labelledby="${anchor}-title">
<h2 id="${anchor}-title">${escaped(release.version)} <span class="date">released ${escaped(release.date)}</span></h2>
${release.notes ? `<p>${escaped(release.notes)}</p>\n` : ''}${body}
</section>`);
  });
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Changelog · ${escaped(title)}</title>
<link rel="icon" href="/favicon.ico">
<style>${STYLE}</style>
</head>
<body>
<header><a href="/docs">API reference</a></header>
<main>
<h1>Changelog</h1>
<p>What changed in the ${escaped(title)}, release by release, found by comparing the released versions of its OpenAPI document. Within a major version, changes are additive: a client written for an earlier release keeps working.</p>
<nav aria-label="On this page"><ul>
${nav.join('\n')}
</ul></nav>
${deprecationsSection(deprecatedIn(current))}
${sections.join('\n')}
</main>
<footer>Made from the OpenAPI document this server serves at <a href="/openapi.json">/openapi.json</a>.</footer>
</body>
</html>
`;
}
