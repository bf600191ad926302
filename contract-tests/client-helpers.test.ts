/**
 * The helpers of the generated client (generated/client.ts), run against the
 * target like every contract test: uploadFile and uploadArtwork with their
 * progress, getFileBox, and waitUntilReady. Each resolves to
 * `{ data, error, response }` with exactly one of data and error set, and
 * throws only where fetch throws (network, abort, the helper's own deadline).
 *
 * The mock keeps no state (every getFile answers its example, a ready file),
 * so what needs stored state or real processing runs on the real server
 * only, each such test saying why in its name.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createApiClient, notAFileProblemType, type ApiResult } from '../generated/client.ts';
import { makeAudio } from '../server/testing/audio.ts';
import { baseUrl, checkedFetch, client, onMock, onePixelPng, token } from './support/context.ts';

const api = client();

async function newProject(name: string) {
  const { data } = await api.POST('/projects', { body: { name } });
  return data!.id;
}

/** Exactly one of data and error is set, as every call of the client promises. */
function expectOneOf(result: ApiResult<unknown, unknown>) {
  expect([result.data === undefined, result.error === undefined].sort()).toEqual([false, true]);
}

/** A client whose fetch reports each request and answer to `seen`, and may answer in place of the server. */
function watchedClient(seen: string[], answer?: (request: Request, count: number) => Response | undefined) {
  let count = 0;
  return createApiClient({
    baseUrl,
    token,
    fetch: async (request: Request) => {
      count += 1;
      seen.push(`${request.method} ${new URL(request.url).pathname}`);
      const response = answer?.(request, count) ?? (await checkedFetch(request));
      seen.push(`answered ${response.status}`);
      return response;
    },
  });
}

/** Bytes that are all different from one 64 KiB chunk to the next, just over `mib` MiB. */
const bytesOf = (mib: number) => Uint8Array.from({ length: Math.round(mib * 1024 * 1024) + 123 }, (_, i) => (i * 31) % 251);

describe('uploadFile and uploadArtwork', () => {
  it('uploadFile resolves { data: { upload, box }, response } without an error', async () => {
    const projectid = await newProject('Client: upload');
    const result = await api.uploadFile(projectid, { name: 'take.wav', mimeType: 'audio/wav' }, new TextEncoder().encode('RIFF'));
    expectOneOf(result);
    expect(result.error).toBeUndefined();
    expect(result.response.status).toBe(200);
    expect(result.data!.box.object).toBe('file');
    expect(result.data!.upload.headers['Content-Type']).toBe('audio/wav');
  });

  it.runIf(!onMock)('uploadFile resolves the stored file the upload URL named, as the PUT answered it (needs stored state: not on the mock)', async () => {
    const projectid = await newProject('Client: upload stored');
    const { data, response } = await api.uploadFile(projectid, { name: 'notes.txt', mimeType: 'text/plain' }, new TextEncoder().encode('notes'));
    expect(data!.box).toMatchObject({ id: data!.upload.boxid, name: 'notes.txt', size: 5, mimeType: 'text/plain', status: 'ready' });
    expect(data!.upload.metadata.projectid).toBe(projectid);
    // The response is the PUT's, the last one of the call.
    expect(response.url.split('?')[0]).toBe(data!.upload.url.split('?')[0]);
  });

  it('uploadFile resolves a refused upload URL request as its problem, without data and without throwing', async () => {
    const projectid = await newProject('Client: upload refused');
    const result = await api.uploadFile(projectid, { name: 'take.wav', mimeType: 'not a type' }, new Uint8Array(4));
    expectOneOf(result);
    expect(result.response.status).toBe(400);
    expect(result.error).toMatchObject({ status: 400, type: expect.any(String), title: expect.any(String), detail: expect.any(String) });
  });

  it.runIf(!onMock)('uploadFile resolves a refused PUT as the PUT\'s problem, with the PUT\'s response (the mock counts no bytes: real server only)', async () => {
    const projectid = await newProject('Client: PUT refused');
    // Five bytes where ten were declared: the server refuses the PUT.
    const result = await api.uploadFile(projectid, { name: 'short.bin', mimeType: 'application/octet-stream', size: 10 }, Readable.from([Buffer.from('12345')]));
    expectOneOf(result);
    expect(result.response.url).toContain('/upload/files/');
    expect(result.error).toMatchObject({ status: 400, detail: expect.stringMatching(/\S/) });
  });

  it('uploadArtwork resolves { data: { upload, project }, response } without an error', async () => {
    const projectid = await newProject('Client: artwork');
    const result = await api.uploadArtwork(projectid, { name: 'cover.png', mimeType: 'image/png' }, onePixelPng);
    expectOneOf(result);
    expect(result.error).toBeUndefined();
    expect(result.data!.upload.headers['x-storage-meta-writeback']).toBe(result.data!.upload.metadata.writeback);
    expect(result.data!.project.artwork?.url).toMatch(/^https?:\/\//);
  });

  it('uploadFile rejects with the abort reason when its signal is aborted, as fetch does', async () => {
    const projectid = await newProject('Client: aborted upload');
    const aborted = api.uploadFile(projectid, { name: 'take.wav', mimeType: 'audio/wav' }, new Uint8Array(4), { signal: AbortSignal.abort() });
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('uploadFile rejects with a TypeError, before any request, when a stream comes without its size', async () => {
    const seen: string[] = [];
    const stream = Readable.from([Buffer.from('abc')]);
    // @ts-expect-error a stream body needs `size`: the types say so too.
    const call = watchedClient(seen).uploadFile('prj_7h2kq9xw4m', { name: 'a.bin', mimeType: 'application/octet-stream' }, stream);
    await expect(call).rejects.toThrow(new TypeError('Give the size in bytes when uploading from a stream.'));
    expect(seen).toEqual([]);
  });
});

describe('upload progress (onProgress)', () => {
  /** Uploads `body` (`size` bytes) with onProgress, through a fetch that notes when the PUT was answered; returns what happened, in order. */
  async function progressOf(body: Parameters<typeof api.uploadFile>[2], size: number) {
    const seen: string[] = [];
    const calls: Array<[number, number]> = [];
    const projectid = await newProject('Client: progress');
    const result = await watchedClient(seen).uploadFile(projectid, { name: 'mix.bin', mimeType: 'application/octet-stream', size }, body, {
      onProgress: (sent, total) => {
        calls.push([sent, total]);
        seen.push(`progress ${sent}`);
      },
    });
    expect(result.error).toBeUndefined();
    return { calls, seen };
  }

  function expectSteadyProgress(calls: Array<[number, number]>, total: number) {
    // Several calls for a body over a MiB, 64 KiB at a time.
    expect(calls.length).toBeGreaterThan(total / (64 * 1024) - 1);
    for (const [index, [sent, reportedTotal]] of calls.entries()) {
      expect(reportedTotal).toBe(total);
      if (index > 0) expect(sent).toBeGreaterThanOrEqual(calls[index - 1]![0]);
    }
    // It ends at the total, and reaches it only once: the last call.
    expect(calls.at(-1)).toEqual([total, total]);
    expect(calls.filter(([sent]) => sent === total)).toHaveLength(1);
  }

  it('counts a Uint8Array of 1.5 MiB in 64 KiB steps, monotonically, and ends at the total once the PUT is answered', async () => {
    const bytes = bytesOf(1.5);
    const { calls, seen } = await progressOf(bytes, bytes.byteLength);
    expectSteadyProgress(calls, bytes.byteLength);
    expect(calls[0]).toEqual([64 * 1024, bytes.byteLength]);
    // The last call comes after the PUT's answer, every other one before it.
    const answered = seen.lastIndexOf('answered 200');
    expect(seen.indexOf(`progress ${bytes.byteLength}`)).toBe(answered + 1);
    expect(seen.slice(0, answered).filter((event) => event.startsWith('progress'))).toHaveLength(calls.length - 1);
  });

  it('counts a Blob, a ReadableStream and a Node.js stream the same way', async () => {
    const bytes = bytesOf(1.2);
    expectSteadyProgress((await progressOf(new Blob([bytes]), bytes.byteLength)).calls, bytes.byteLength);
    // Streams arrive in chunks of any size (here 300 KiB and the rest); progress still moves by at most 64 KiB.
    const web = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.subarray(0, 300 * 1024));
        controller.enqueue(bytes.subarray(300 * 1024));
        controller.close();
      },
    });
    expectSteadyProgress((await progressOf(web, bytes.byteLength)).calls, bytes.byteLength);
    expectSteadyProgress((await progressOf(Readable.from([Buffer.from(bytes)]), bytes.byteLength)).calls, bytes.byteLength);
  });

  it('is called once, with the total, for a body that fits in one chunk', async () => {
    const { calls } = await progressOf(new Uint8Array(1000), 1000);
    expect(calls).toEqual([[1000, 1000]]);
  });
});

describe('getFileBox', () => {
  it('reads a file with data typed as a FileBox, its status readable without narrowing', async () => {
    const projectid = await newProject('Client: getFileBox');
    const { data: uploaded } = await api.uploadFile(projectid, { name: 'notes.txt', mimeType: 'text/plain' }, new TextEncoder().encode('notes'));
    const result = await api.getFileBox(uploaded!);
    expectOneOf(result);
    expect(result.data!.object).toBe('file');
    expect(['awaiting-upload', 'pending', 'processing', 'ready', 'failed']).toContain(result.data!.status);
  });

  it.runIf(!onMock)('reads the file it is given, by { projectid, fileid } or by what uploadFile resolved to (needs stored state: not on the mock)', async () => {
    const projectid = await newProject('Client: getFileBox ref');
    const { data: uploaded } = await api.uploadFile(projectid, { name: 'notes.txt', mimeType: 'text/plain' }, new TextEncoder().encode('notes'));
    const byIds = await api.getFileBox({ projectid, fileid: uploaded!.box.id });
    const byUpload = await api.getFileBox(uploaded!);
    expect(byIds.data).toEqual(uploaded!.box);
    expect(byUpload.data).toEqual(uploaded!.box);
  });

  it.runIf(!onMock)('answers a folder or stack id with a client problem that says what the box is and what to call instead (the mock answers every id with a file)', async () => {
    const projectid = await newProject('Client: not a file');
    const { data: folder } = await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'Mixes' } });
    const asFolder = await api.getFileBox({ projectid, fileid: folder!.id });
    expectOneOf(asFolder);
    expect(asFolder.response.status).toBe(200);
    expect(asFolder.error).toMatchObject({ type: notAFileProblemType, title: 'Not a file', status: 404, box: { id: folder!.id, object: 'folder' } });
    expect(asFolder.error!.detail).toBe(
      `${folder!.id} is a folder, not a file. Pass the id of a file among its children, or read the folder itself with GET /projects/${projectid}/files/${folder!.id}.`,
    );

    const { data: uploaded } = await api.uploadFile(projectid, { name: 'v1.txt', mimeType: 'text/plain' }, new TextEncoder().encode('v1'));
    const asStack = await api.getFileBox({ projectid, fileid: uploaded!.upload.stackid });
    expect(asStack.error).toMatchObject({ type: notAFileProblemType, status: 404, box: { object: 'stack' } });
    expect(asStack.error!.detail).toContain(`is a stack (the versions of one track), not a file`);
    expect(asStack.error!.detail).toContain(`the newest is last: ${uploaded!.box.id}`);
  });

  it.runIf(!onMock)('resolves the server\'s 404 problem for an id that names nothing (the mock answers every id)', async () => {
    const projectid = await newProject('Client: no such file');
    const result = await api.getFileBox({ projectid, fileid: 'box_n0th1ngh3r3' });
    expectOneOf(result);
    expect(result.response.status).toBe(404);
    expect(result.error).toMatchObject({ type: '/problems/not-found', status: 404 });
  });
});

describe('waitUntilReady', () => {
  it.runIf(!onMock)('waits until real audio is analysed, and resolves the ready file (needs processing: real server only)', async () => {
    const projectid = await newProject('Client: wait ready');
    const tone = await makeAudio('tone.wav', ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=1', '-c:a', 'pcm_s16le']);
    const { data: uploaded } = await api.uploadFile(projectid, { name: 'tone.wav', mimeType: 'audio/wav' }, tone);
    expect(['pending', 'processing']).toContain(uploaded!.box.status);
    const result = await api.waitUntilReady(uploaded!, { intervalMs: 50 });
    expectOneOf(result);
    expect(result.data).toMatchObject({ id: uploaded!.box.id, status: 'ready', duration: 1, audio: { sampleRate: 48000 } });
    // Asked again by ids, it answers at once with the same file.
    expect((await api.waitUntilReady({ projectid, fileid: uploaded!.box.id })).data).toEqual(result.data);
  });

  it.runIf(onMock)('on the mock, resolves at once with getFile\'s example, a ready file', async () => {
    const result = await api.waitUntilReady({ projectid: 'prj_7h2kq9xw4m', fileid: 'box_f1le9k3m2p' }, { timeoutMs: 5000 });
    expect(result.data).toMatchObject({ object: 'file', status: 'ready' });
  });

  it.runIf(!onMock)('resolves a file whose analysis failed as data with its reason, not as an error (needs processing: real server only)', async () => {
    const projectid = await newProject('Client: wait failed');
    const { data: uploaded } = await api.uploadFile(projectid, { name: 'broken.wav', mimeType: 'audio/wav' }, new TextEncoder().encode('RIFF....WAVEfmt not really audio'));
    const result = await api.waitUntilReady(uploaded!, { intervalMs: 50 });
    expectOneOf(result);
    expect(result.data).toMatchObject({ status: 'failed', statusReason: expect.stringMatching(/\S/) });
  });

  it.runIf(!onMock)('rejects with a TimeoutError DOMException when the file is not done by timeoutMs (needs a file that stays awaiting-upload: real server only)', async () => {
    const projectid = await newProject('Client: wait timeout');
    const { data: pending } = await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: 'never.wav', mimeType: 'audio/wav', size: 10 } });
    const seen: string[] = [];
    const started = performance.now();
    const waited = watchedClient(seen).waitUntilReady({ projectid, fileid: pending!.boxid }, { timeoutMs: 400, intervalMs: 20 });
    const error = await waited.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(DOMException);
    expect(error).toMatchObject({ name: 'TimeoutError', message: 'The file did not finish processing within 400 ms.' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
    // It kept reading the file until then.
    expect(seen.filter((event) => event.startsWith('GET')).length).toBeGreaterThan(2);
  });

  it.runIf(!onMock)('rejects with the reason of an aborted signal, and reads no more (needs a file that stays awaiting-upload: real server only)', async () => {
    const projectid = await newProject('Client: wait aborted');
    const { data: pending } = await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: 'never.wav', mimeType: 'audio/wav', size: 10 } });
    const controller = new AbortController();
    const seen: string[] = [];
    const reason = new Error('the user left the page');
    // Abort while the second read is under way.
    const watched = watchedClient(seen, (_request, count) => {
      if (count === 2) queueMicrotask(() => controller.abort(reason));
      return undefined;
    });
    await expect(watched.waitUntilReady({ projectid, fileid: pending!.boxid }, { signal: controller.signal, intervalMs: 20 })).rejects.toBe(reason);
    const reads = seen.filter((event) => event.startsWith('GET')).length;
    expect(reads).toBe(2);
  });

  it('waits out a 429 as its Retry-After asks, then reads again', async () => {
    const seen: string[] = [];
    const limited = watchedClient(seen, (_request, count) =>
      count === 1
        ? new Response(JSON.stringify({ type: '/problems/too-many-requests', title: 'Too many requests', status: 429, detail: 'Slow down.' }), {
            status: 429,
            headers: { 'Content-Type': 'application/problem+json', 'Retry-After': '0' },
          })
        : undefined,
    );
    const projectid = await newProject('Client: wait 429');
    const { data: uploaded } = await api.uploadFile(projectid, { name: 'notes.txt', mimeType: 'text/plain' }, new TextEncoder().encode('notes'));
    const result = await limited.waitUntilReady(uploaded!, { intervalMs: 60_000 });
    // With Retry-After: 0 the second read comes at once, not after intervalMs (the test would time out).
    expect(result.data?.status).toBe('ready');
    expect(seen.filter((event) => event.startsWith('GET'))).toHaveLength(2);
    expect(seen[1]).toBe('answered 429');
  });

  it.runIf(!onMock)('resolves at once with the not-a-file problem when given a folder (the mock answers every id with a file)', async () => {
    const projectid = await newProject('Client: wait folder');
    const { data: folder } = await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'Mixes' } });
    const result = await api.waitUntilReady({ projectid, fileid: folder!.id }, { timeoutMs: 5000 });
    expect(result.error).toMatchObject({ type: notAFileProblemType, box: { object: 'folder' } });
  });
});
