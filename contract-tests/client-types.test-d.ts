/**
 * Type tests of the generated client, checked by `npm run typecheck`
 * (tsc over contract-tests/), never run: each `@ts-expect-error` line must
 * fail to compile, or tsc fails on the unused directive. The other lines must
 * compile, with the types `expectTypeOf` names.
 *
 * The server refuses, with 400, a body with a property its schema does not
 * name (additionalProperties: false); the client refuses it at compile time.
 */
import { expectTypeOf } from 'vitest';
import type { ApiClient, ApiResult, FileBox, NotAFileProblem, Problem, Schemas, SettledFileBox, UploadedArtwork, UploadedFile } from '../generated/client.ts';

declare const api: ApiClient;
declare const bytes: Uint8Array;
declare const stream: ReadableStream<Uint8Array>;

export async function strictBodies() {
  // Correct calls compile, with openapi-fetch's precise results.
  const player = await api.POST('/players', { body: { name: 'x', options: { quality: 'original' } } });
  expectTypeOf(player.data).toEqualTypeOf<Schemas['Player'] | undefined>();
  const project = await api.POST('/projects', { body: { name: 'x', color: '#ffffff' } });
  expectTypeOf(project.data).toEqualTypeOf<Schemas['Project'] | undefined>();
  // Every error is a Problem; a 403 may be an insufficient-scope one, which names the scope.
  if (project.error) expectTypeOf(project.error).toExtend<Problem>();
  if (project.error && 'scope' in project.error) expectTypeOf(project.error.scope).toEqualTypeOf<string | undefined>();

  // A misspelt property of a body, at the top.
  // @ts-expect-error 'colour' does not exist in type '{ name: string; … }'
  await api.POST('/players', { body: { name: 'x', colour: '#fff' } });
  // @ts-expect-error 'colr' does not exist in type '{ name: string; color?: string; … }'. Did you mean 'color'?
  await api.POST('/projects', { body: { name: 'x', colr: '#ffffff' } });
  // Nested.
  // @ts-expect-error 'qualty' does not exist in type '{ quality?: …; … }'. Did you mean 'quality'?
  await api.POST('/players', { body: { name: 'x', options: { qualty: 'original' } } });
  // In an update.
  // @ts-expect-error 'nmae' does not exist in type '{ name?: string; … }'
  await api.POST('/projects/{projectid}', { params: { path: { projectid: 'prj_1' } }, body: { nmae: 'y' } });
  // In params: a path parameter, a query parameter.
  // @ts-expect-error 'fileId' does not exist in type '{ projectid: string; fileid: string }'
  await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid: 'prj_1', fileId: 'box_1' } } });
  // @ts-expect-error 'qualty' does not exist in type '{ quality?: … }'
  await api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path: { projectid: 'p', fileid: 'f' }, query: { qualty: 'lossless' } } });
  // And beside them: the init itself.
  // @ts-expect-error 'bodyy' does not exist in type …
  await api.POST('/projects', { body: { name: 'x' }, bodyy: {} });

  // A required field is still required, and a value still has its type.
  // @ts-expect-error Property 'name' is missing
  await api.POST('/projects', { body: { color: '#ffffff' } });
  // @ts-expect-error Type '"best"' is not assignable to type '"original" | "compressed" | "lossless"'
  await api.POST('/players', { body: { name: 'x', options: { quality: 'best' } } });
  // A path without its required params.
  // @ts-expect-error Expected 2 arguments, but got 1.
  await api.GET('/projects/{projectid}');

  // `request` is as strict.
  // @ts-expect-error 'colour' does not exist
  await api.request('post', '/players', { body: { name: 'x', colour: '#fff' } });
  expectTypeOf((await api.request('get', '/me')).data).toEqualTypeOf<Schemas['User'] | undefined>();

  // parseAs still picks the type of data, as in openapi-fetch.
  expectTypeOf((await api.GET('/me', { parseAs: 'text' })).data).toEqualTypeOf<string | undefined>();
  expectTypeOf((await api.GET('/me', { parseAs: 'blob' })).data).toEqualTypeOf<Blob | undefined>();
}

export async function helpers() {
  // getFile answers any box; reading a file's status needs a narrowing step.
  const box = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid: 'p', fileid: 'f' } } });
  // @ts-expect-error Property 'status' does not exist on type '{ … object: "folder" … }'
  void box.data?.status;
  // getFileBox does not need one.
  const file = await api.getFileBox({ projectid: 'p', fileid: 'f' });
  expectTypeOf(file).toEqualTypeOf<ApiResult<FileBox, Problem | NotAFileProblem>>();
  if (file.data) expectTypeOf(file.data.status).toEqualTypeOf<'awaiting-upload' | 'pending' | 'processing' | 'ready' | 'failed'>();
  // The client's own problem carries the box it found instead.
  if (file.error && 'box' in file.error) expectTypeOf(file.error.box).toEqualTypeOf<Schemas['FolderBox'] | Schemas['StackBox']>();

  // Uploads resolve { data, error, response }.
  const uploaded = await api.uploadFile('p', { name: 'a.wav', mimeType: 'audio/wav' }, bytes, { onProgress: (sent, total) => void [sent, total] });
  expectTypeOf(uploaded).toEqualTypeOf<ApiResult<UploadedFile>>();
  expectTypeOf(await api.uploadArtwork('p', { name: 'a.png', mimeType: 'image/png' }, bytes)).toEqualTypeOf<ApiResult<UploadedArtwork>>();
  // A stream needs its size.
  await api.uploadFile('p', { name: 'a.wav', mimeType: 'audio/wav', size: 10 }, stream);
  // @ts-expect-error Property 'size' is missing
  await api.uploadFile('p', { name: 'a.wav', mimeType: 'audio/wav' }, stream);
  // The request objects are strict too; artwork has no parent.
  // @ts-expect-error 'mimetype' does not exist. Did you mean 'mimeType'?
  await api.uploadFile('p', { name: 'a.wav', mimetype: 'audio/wav' }, bytes);
  // @ts-expect-error 'parentid' does not exist
  await api.uploadArtwork('p', { name: 'a.png', mimeType: 'image/png', parentid: 'box_1' }, bytes);
  // The signed URL is used as the server gives it: there is no option to rewrite it.
  // @ts-expect-error 'resolveUploadUrl' does not exist in type 'UploadOptions'
  await api.uploadFile('p', { name: 'a.wav', mimeType: 'audio/wav' }, bytes, { resolveUploadUrl: (url: string) => url });

  // waitUntilReady takes ids, or what uploadFile resolved to; it resolves a settled file.
  if (uploaded.data) expectTypeOf(await api.waitUntilReady(uploaded.data)).toEqualTypeOf<ApiResult<SettledFileBox, Problem | NotAFileProblem>>();
  const settled = await api.waitUntilReady({ projectid: 'p', fileid: 'f' }, { timeoutMs: 60_000, intervalMs: 500, signal: AbortSignal.timeout(1000) });
  if (settled.data) expectTypeOf(settled.data.status).toEqualTypeOf<'ready' | 'failed'>();
  // A FileBox alone does not say which project it is in.
  // @ts-expect-error not assignable to parameter of type 'FileRef'
  if (uploaded.data) await api.waitUntilReady(uploaded.data.box);
  // @ts-expect-error 'timeout' does not exist in type 'WaitOptions'
  await api.waitUntilReady({ projectid: 'p', fileid: 'f' }, { timeout: 1000 });
}
