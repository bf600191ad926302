/**
 * What partners read in the spec (generated/openapi.json, the bundle of
 * openapi/, kept fresh by `npm run check:generated`): text that stands on its
 * own, examples of the right kind, and the named examples the mock answers
 * with on `Prefer: example=…` (listed in the README).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { specPath } from '../server/app.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
const spec = JSON.parse(readFileSync(specPath, 'utf8')) as JsonObject;
const isObject = (value: Json | undefined): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every [JSON path, value] under `node`. */
function* walk(node: Json, path = '#'): Generator<[string, Json]> {
  yield [path, node];
  if (Array.isArray(node)) for (const [i, child] of node.entries()) yield* walk(child, `${path}/${i}`);
  else if (isObject(node)) for (const [key, child] of Object.entries(node)) yield* walk(child, `${path}/${key}`);
}

/** The prose of the spec: every description and summary, and the servers' descriptions. */
const prose = [...walk(spec)].filter(([path, value]) => /\/(description|summary)$/.test(path) && typeof value === 'string') as Array<[string, string]>;

/** Every example value: `example`, and the `value` of each named example. */
const exampleValues = [...walk(spec)].filter(([path]) => /\/example$/.test(path) || /\/examples\/[^/]+\/value$/.test(path)).map(([, value]) => value);

describe('the spec as partners read it', () => {
  it('cites no section of an outside document, and names no setting of the server or detail of its making', () => {
    expect(prose.length).toBeGreaterThan(100);
    // A setting is written like MAX_UPLOAD_BYTES (field names such as samples_per_pixel are lower case).
    const offending = prose.filter(([, text]) => /\binterface\b|fsync|ffmpeg pass|streamed to disk|SKIP LOCKED|in the database/i.test(text) || /\b[A-Z]{2,}(?:_[A-Z]{2,})+\b/.test(text));
    expect(offending).toEqual([]);
  });

  it('states configurable limits as defaults a server operator can change', () => {
    // 5 GiB uploads, 20 MiB artwork, one-hour URLs, 60-second upload claims and the rate limits are settings.
    const limits = prose.filter(([, text]) => /5 GiB|20 MiB|one hour|60 seconds|300 requests/.test(text));
    expect(limits.length).toBeGreaterThan(5);
    expect(limits.filter(([, text]) => !/by\s+default/i.test(text) || !/operator/.test(text))).toEqual([]);
  });

  it('gives every id field and parameter an example of its own kind', () => {
    const isId = (schema: Json | undefined) =>
      isObject(schema) && (schema.$ref === '#/components/schemas/Id' || (Array.isArray(schema.allOf) && schema.allOf.length === 1 && isObject(schema.allOf[0]) && schema.allOf[0].$ref === '#/components/schemas/Id'));
    // The prefixes newId gives each kind (server/lib/ids.ts); boxes are files, folders and stacks.
    const prefixFor = (owner: string, field: string) => {
      if (field === 'id') {
        const byOwner: Record<string, string> = { Player: 'ply_', PlayerView: 'ply_', Project: 'prj_', User: 'usr_', Comment: 'cmt_', Webhook: 'whk_', WebhookDelivery: 'msg_', WebhookEvent: 'evt_', Session: 'ses_', Passkey: 'pky_', Token: 'tok_', SecurityEvent: 'sev_', AdminUser: 'usr_', Invitation: 'otl_', Notification: 'ntf_', App: 'app_', ConnectedApp: 'app_' };
        return byOwner[owner] ?? 'box_';
      }
      if (owner === 'MarkNotificationsReadRequest' && field === 'ids') return 'ntf_';
      if (field === 'webhookid') return 'whk_';
      if (field === 'deliveryid') return 'msg_';
      if (field === 'sessionid') return 'ses_';
      if (field === 'tokenid') return 'tok_';
      if (field === 'userid') return 'usr_';
      if (field === 'eventid') return 'evt_';
      if (field === 'passkeyid') return 'pky_';
      if (field === 'appid') return 'app_';
      if (/projectid$/.test(field)) return 'prj_';
      if (field === 'playerid' || field === 'playerids') return 'ply_';
      if (field === 'uploadid') return 'upl_';
      if (field === 'commentid' || (/Comment/.test(owner) && field === 'parentid')) return 'cmt_';
      if (owner === 'ArtworkUploadUrlResponse' && field === 'boxid') return 'art_';
      return 'box_';
    };
    const fields: Array<{ where: string; example: Json | undefined; prefix: string }> = [];
    for (const [path, node] of walk(spec.components as JsonObject, '#/components')) {
      if (!isObject(node) || !isObject(node.properties)) continue;
      const owner = /^#\/components\/schemas\/([^/]+)/.exec(path)?.[1] ?? path;
      for (const [field, property] of Object.entries(node.properties)) {
        const idSchema = isId(property) ? property : isObject(property) && isId(property.items) ? property.items : undefined;
        if (isObject(idSchema)) fields.push({ where: `${path}/properties/${field}`, example: idSchema.example, prefix: prefixFor(owner, field) });
      }
    }
    for (const [path, node] of walk(spec)) {
      if (isObject(node) && node.in === 'path' && isId(node.schema)) fields.push({ where: path, example: node.example, prefix: prefixFor('', node.name as string) });
    }
    expect(fields.length).toBeGreaterThan(25);
    expect(fields.filter(({ example, prefix }) => typeof example !== 'string' || !example.startsWith(prefix))).toEqual([]);
  });

  it("writes every signed URL and player link of its examples on a server's default address, under /api/v1", () => {
    const urls = exampleValues.flatMap((value) => [...walk(value)].map(([, inner]) => inner)).filter((value): value is string => typeof value === 'string' && /^https?:\/\//.test(value));
    const signed = urls.filter((url) => /\/(upload|download)\//.test(url));
    expect(signed.length).toBeGreaterThan(5);
    expect(signed.filter((url) => !url.startsWith('http://localhost:8080/api/v1/'))).toEqual([]);
    expect(urls.filter((url) => url.includes('/p/') && !url.startsWith('http://localhost:8080/p/'))).toEqual([]);
  });

  it('offers the mock the named examples the README lists, the usual case first', () => {
    const responses = spec.components as { responses: Record<string, { content: Record<string, { examples?: Record<string, unknown> }> }> };
    const named = (response: { content: Record<string, { examples?: Record<string, unknown> }> }) => Object.keys(Object.values(response.content)[0].examples ?? {});
    const paths = spec.paths as Record<string, Record<string, { responses: Record<string, { content: Record<string, { examples?: Record<string, unknown> }> }> }>>;
    expect(named(paths['/projects/{projectid}/files/{fileid}'].get.responses['200'])).toEqual(['readyAudioFile', 'processingAudioFile', 'awaitingUploadFile', 'failedFile', 'nonAudioFile', 'stack', 'folder']);
    const expected: Record<string, string[]> = {
      NotFound: ['projectNotFound', 'fileNotFound'],
      PlayerNotFound: ['playerNotFound'],
      UploadNotFound: ['uploadNotFound', 'fileDeletedDuringUpload'],
      DownloadNotFound: ['downloadGone'],
      Conflict: ['conflict', 'hiddenOnFile', 'versionNameOutsideStack', 'notABoxOfProject', 'notAFile', 'parentNotAContainer', 'idempotencyKeyInUse'],
      PlayerConflict: ['paymentProviderRequired', 'folderNotInProject', 'idempotencyKeyInUse'],
      DownloadConflict: ['uploadNotCompleted', 'renditionMissing', 'notAnalysed'],
      PayloadTooLarge: ['bodyTooLarge'],
      UploadTooLarge: ['declaredSizeTooLarge', 'storageQuotaExceeded', 'bodyTooLarge'],
      ArtworkTooLarge: ['artworkTooLarge', 'storageQuotaExceeded', 'bodyTooLarge'],
      UploadBodyTooLarge: ['bodyLongerThanDeclared'],
      UploadUsed: ['uploadAlreadyUsed', 'uploadInProgress'],
      ProjectChanged: ['projectChanged'],
      PlayerChanged: ['playerChanged'],
      BoxChanged: ['boxChanged'],
      PreferencesChanged: ['preferencesChanged'],
      TooManyRequests: ['userLimit', 'addressLimit'],
      AddressTooManyRequests: ['addressLimit'],
    };
    for (const [response, names] of Object.entries(expected)) expect(named(responses.responses[response]), response).toEqual(names);
    const failed = (paths['/projects/{projectid}/files/{fileid}'].get.responses['200'].content['application/json'].examples as Record<string, { value: JsonObject }>).failedFile.value;
    expect(failed).toMatchObject({ status: 'failed', statusReason: expect.any(String) });
  });

  it('documents a 429 and a default problem (RFC 9457) on every operation', () => {
    /** A response, with a `$ref` to components followed. */
    const resolve = (node: Json | undefined): JsonObject => {
      if (!isObject(node) || typeof node.$ref !== 'string') return node as JsonObject;
      return node.$ref
        .slice(2)
        .split('/')
        .reduce<Json>((at, part) => (at as JsonObject)[part.replace(/~1/g, '/').replace(/~0/g, '~')], spec) as JsonObject;
    };
    const operations = Object.entries(spec.paths as JsonObject).flatMap(([path, item]) =>
      Object.entries(item as JsonObject)
        .filter(([method]) => ['get', 'put', 'post', 'delete', 'patch'].includes(method))
        .map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, responses: (operation as JsonObject).responses as JsonObject })),
    );
    expect(operations.length).toBeGreaterThan(40);
    const isProblem = (response: JsonObject) => {
      const content = response.content as JsonObject;
      return Object.keys(content).join() === 'application/problem+json' && (content['application/problem+json'] as JsonObject).schema !== undefined;
    };
    const gaps = operations.flatMap(({ name, responses }) => {
      const tooMany = resolve(responses['429']);
      const other = resolve(responses.default);
      return [
        ...(tooMany && isProblem(tooMany) && isObject(tooMany.headers) && 'Retry-After' in tooMany.headers ? [] : [`${name}: no 429 problem with Retry-After`]),
        ...(other && isProblem(other) && /^Any other problem \(RFC 9457\)/.test(other.description as string) ? [] : [`${name}: no default problem`]),
      ];
    });
    expect(gaps).toEqual([]);
    // The default is the Problem schema itself: any status, one shape.
    const problem = (spec.components as { responses: Record<string, JsonObject> }).responses.DefaultProblem.content as Record<string, JsonObject>;
    expect(problem['application/problem+json'].schema).toEqual({ $ref: '#/components/schemas/Problem' });
  });

  it('answers the generic Conflict, shared by several operations, with an example about none of them first', () => {
    const conflict = (spec.components as { responses: Record<string, { content: Record<string, { examples: Record<string, { value: JsonObject }> }> }> }).responses.Conflict;
    const users = [...walk(spec.paths as JsonObject, '#/paths')].filter(([, node]) => isObject(node) && node.$ref === '#/components/responses/Conflict');
    expect(users.length).toBeGreaterThan(1);
    const [first] = Object.values(conflict.content['application/problem+json'].examples);
    expect(first.value).toMatchObject({ type: '/problems/conflict', status: 409 });
    // No id of one resource, and none of the fields only one operation takes.
    expect(first.value.detail).not.toMatch(/\b(prj|box|ply|upl|cmt|usr)_|\b(hidden|addids|versionName|parentid)\b/);
  });
});
