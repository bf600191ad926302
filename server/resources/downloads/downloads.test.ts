import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { useTestServer, type Harness } from '../../testing/harness.ts';
import { makeAudio } from '../../testing/audio.ts';
import { onePixelPng } from '../../testing/fixtures.ts';
import { waitForStatus } from '../../testing/files.ts';
import type { BlobStore } from '../../blobs/blob-store.ts';
import type { Logger } from '../../lib/logger.ts';
import { byteRange, dispositionHeader, isNotModified, presentation } from './download-rules.ts';
import { signDownload } from '../../signing/signed-downloads.ts';
import { hostilePage, hostileSvg, hostileXhtml } from './hostile-files.ts';

const SAFETY = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "sandbox; default-src 'none'",
  'cross-origin-resource-policy': 'cross-origin',
};

function expectSafetyHeaders(response: Response) {
  for (const [name, value] of Object.entries(SAFETY)) expect(response.headers.get(name), `${name} on ${response.status}`).toBe(value);
}

function expectOpaqueAttachment(response: Response) {
  expect(response.headers.get('content-type')).toBe('application/octet-stream');
  expect(response.headers.get('content-disposition')).toMatch(/^attachment;/);
  expectSafetyHeaders(response);
}

/** A canonical 44-byte PCM WAV header (16-bit stereo, 48 kHz) for `dataBytes` of samples. */
function wavHeader(dataBytes: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(2, 22);
  header.writeUInt32LE(48000, 24);
  header.writeUInt32LE(48000 * 4, 28);
  header.writeUInt16LE(4, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}


describe('download rules', () => {
  it('parses single and suffix ranges as RFC 9110 defines them', () => {
    expect(byteRange('bytes=0-99', 1000)).toEqual({ start: 0, end: 99 });
    expect(byteRange('bytes=900-', 1000)).toEqual({ start: 900, end: 999 });
    expect(byteRange('bytes=900-5000', 1000)).toEqual({ start: 900, end: 999 });
    expect(byteRange('bytes=-100', 1000)).toEqual({ start: 900, end: 999 });
    expect(byteRange('bytes=-5000', 1000)).toEqual({ start: 0, end: 999 });
    expect(byteRange('bytes=-5000', 0)).toBe('unsatisfiable');
    expect(byteRange('Bytes=0-0', 1000)).toEqual({ start: 0, end: 0 });
    // Overlapping ranges merge into one.
    expect(byteRange('bytes=0-10,5-20', 1000)).toEqual({ start: 0, end: 20 });
    expect(byteRange('bytes=1000-', 1000)).toBe('unsatisfiable');
    expect(byteRange('bytes=-0', 1000)).toBe('unsatisfiable');
    expect(byteRange('bytes=0-', 0)).toBe('unsatisfiable');
    // Not understood, several ranges, or invalid: ignored, so the whole file is sent.
    expect(byteRange(undefined, 1000)).toBeUndefined();
    expect(byteRange('bytes=0-1,5-6', 1000)).toBeUndefined();
    expect(byteRange('items=0-1', 1000)).toBeUndefined();
    expect(byteRange('items=5000-', 1000)).toBeUndefined();
    expect(byteRange('bytes=5-1', 1000)).toBeUndefined();
    expect(byteRange('bytes=abc', 1000)).toBeUndefined();
    expect(byteRange('bytes=', 1000)).toBeUndefined();
  });

  it('evaluates If-None-Match by weak comparison, as RFC 9110 section 13.1.2 says', () => {
    const etag = '"box_1-1000-r2"';
    expect(isNotModified(undefined, etag)).toBe(false);
    expect(isNotModified(etag, etag)).toBe(true);
    expect(isNotModified(`W/${etag}`, etag)).toBe(true);
    expect(isNotModified(`"other", ${etag}`, etag)).toBe(true);
    expect(isNotModified('*', etag)).toBe(true);
    expect(isNotModified('"box_1-1000"', etag)).toBe(false);
  });

  it('writes an ASCII filename, and filename* for names that are not ASCII', () => {
    expect(dispositionHeader('attachment', 'mix.wav')).toBe('attachment; filename="mix.wav"');
    expect(dispositionHeader('inline', 'mix.wav')).toBe('inline; filename="mix.wav"');
    expect(dispositionHeader('attachment', 'Björk "live".flac')).toBe(`attachment; filename="Bj_rk _live_.flac"; filename*=UTF-8''Bj%C3%B6rk%20%22live%22.flac`);
  });

  it('sanitises filenames: no path separators, no dot segments, no controls, no hidden files', () => {
    expect(dispositionHeader('attachment', '../../../../etc/passwd')).toBe('attachment; filename="etc_passwd"');
    expect(dispositionHeader('attachment', '..\\..\\windows\\win.ini')).toBe('attachment; filename="windows_win.ini"');
    expect(dispositionHeader('attachment', '/abs/path/take 1.wav')).toBe('attachment; filename="abs_path_take 1.wav"');
    expect(dispositionHeader('attachment', '.htaccess')).toBe('attachment; filename="htaccess"');
    expect(dispositionHeader('attachment', '...bashrc')).toBe('attachment; filename="bashrc"');
    expect(dispositionHeader('attachment', 'mix\r\nSet-Cookie: a=b.wav')).toBe('attachment; filename="mixSet-Cookie: a=b.wav"');
    expect(dispositionHeader('attachment', 'a\u0000b\u001f\u007fc.wav')).toBe('attachment; filename="abc.wav"');
    // A right-to-left override would show "invoice\u202Evaw.exe" as "invoiceexe.wav".
    expect(dispositionHeader('attachment', 'invoice\u202Evaw.exe')).toBe('attachment; filename="invoicevaw.exe"');
    expect(dispositionHeader('attachment', '../..')).toBe('attachment; filename="download"');
    expect(dispositionHeader('attachment', '../Café/../.mix.wav')).toBe(`attachment; filename="Caf__.mix.wav"; filename*=UTF-8''Caf%C3%A9_.mix.wav`);
  });

  it('serves inline only what is on the allow-list, and everything else as an opaque attachment', () => {
    expect(presentation('inline', 'audio/wav')).toEqual({ disposition: 'inline', contentType: 'audio/wav' });
    expect(presentation('attachment', 'audio/wav')).toEqual({ disposition: 'attachment', contentType: 'audio/wav' });
    expect(presentation('inline', undefined)).toEqual({ disposition: 'attachment', contentType: 'application/octet-stream' });
  });
});

describe.each(backends)('downloads on %s', (backend) => {
  const t = useTestServer(backend);
  // A WAV header, then a byte pattern, so that every byte of a range can be checked.
  const content = Buffer.concat([wavHeader(956), Buffer.from(Array.from({ length: 956 }, (_, i) => i % 251))]);

  async function stored(name = 'Café mix.wav', mimeType = 'audio/wav', bytes: Uint8Array = content) {
    const { api } = await t.as('listener@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Downloads' } });
    const projectid = project!.id;
    const { box } = (await api.uploadFile(projectid, { name, mimeType }, bytes)).data!;
    const { data } = await api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path: { projectid, fileid: box.id } } });
    // What the player page signs for streaming: the same signer, inline.
    const inline = signDownload(t.server.ctx, box.id, 'inline');
    return { api, projectid, box, download: data!, inline };
  }

  it('signs a URL that expires in an hour, in milliseconds since the epoch', async () => {
    const { download } = await stored();
    expect(download.expires).toBeGreaterThan(Date.now() + 3590 * 1000);
    expect(download.expires).toBeLessThan(Date.now() + 3610 * 1000);
    expect(new URL(download.url).searchParams.get('expires')).toBe(String(download.expires));
  });

  it('sends the whole file with its type, ETag and original name', async () => {
    const { download } = await stored();
    const response = await fetch(download.url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('audio/wav');
    expect(response.headers.get('accept-ranges')).toBe('bytes');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="Caf_ mix.wav"; filename*=UTF-8''Caf%C3%A9%20mix.wav`);
    expectSafetyHeaders(response);
    expect(Buffer.from(await response.arrayBuffer()).equals(content)).toBe(true);
    const etag = response.headers.get('etag')!;
    expect(etag).toMatch(/^"box_\w+-1000-r2"$/);
    const again = await fetch(download.url, { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    expectSafetyHeaders(again);
    // An ETag of the rules before the allow-list does not revalidate.
    expect((await fetch(download.url, { headers: { 'If-None-Match': etag.replace('-r2', '') } })).status).toBe(200);
  });

  it('answers ranges with 206 and Content-Range, and unsatisfiable ones with 416', async () => {
    const { download } = await stored();
    const part = await fetch(download.url, { headers: { Range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 100-199/1000');
    expect(part.headers.get('content-type')).toBe('audio/wav');
    expectSafetyHeaders(part);
    expect(Buffer.from(await part.arrayBuffer()).equals(content.subarray(100, 200))).toBe(true);
    const seek = await fetch(download.url, { headers: { Range: 'bytes=990-' } });
    expect(Buffer.from(await seek.arrayBuffer()).equals(content.subarray(990))).toBe(true);
    const suffix = await fetch(download.url, { headers: { Range: 'bytes=-10' } });
    expect(suffix.headers.get('content-range')).toBe('bytes 990-999/1000');
    const several = await fetch(download.url, { headers: { Range: 'bytes=0-1,5-6' } });
    expect(several.status).toBe(200);
    expect((await several.arrayBuffer()).byteLength).toBe(1000);
    const beyond = await fetch(download.url, { headers: { Range: 'bytes=5000-' } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe('bytes */1000');
    expectSafetyHeaders(beyond);
    expect((await beyond.json()).type).toBe('/problems/range-not-satisfiable');
  });

  it('refuses a tampered, re-dispositioned or expired URL with 403, and a deleted file with 404, with the safety headers', async () => {
    const { api, projectid, box, download } = await stored();
    const inline = new URL(download.url);
    inline.searchParams.set('disposition', 'inline');
    const other = new URL(download.url.replace(box.id, 'box_0000000000000000'));
    for (const url of [inline, other]) {
      const refused = await fetch(url);
      expect(refused.status).toBe(403);
      expectSafetyHeaders(refused);
    }
    t.server.clock.advance(3601 * 1000);
    try {
      expect((await fetch(download.url)).status).toBe(403);
    } finally {
      t.server.clock.advance(-3601 * 1000);
    }
    await api.DELETE('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: box.id } } });
    const gone = await fetch(download.url);
    expect(gone.status).toBe(404);
    expectSafetyHeaders(gone);
  });

  it('refuses to sign a download of a folder or stack, or of a box the caller cannot see', async () => {
    const { api, projectid, box } = await stored();
    const { data: file } = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: box.id } } });
    const stackid = (file as { parentid: string }).parentid;
    expect((await api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path: { projectid, fileid: stackid } } })).response.status).toBe(409);
    const stranger = await t.as('stranger@example.com');
    expect((await stranger.api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path: { projectid, fileid: box.id } } })).response.status).toBe(404);
  });

  describe('what is served inline (stored XSS)', () => {
    it('serves an uploaded HTML page as an opaque attachment, even through a URL signed inline', async () => {
      const { inline, download } = await stored('mix.html', 'text/html', Buffer.from(hostilePage));
      for (const url of [inline.url, download.url]) {
        const response = await fetch(url);
        expect(response.status).toBe(200);
        expectOpaqueAttachment(response);
        expect(response.headers.get('content-disposition')).toBe('attachment; filename="mix.html"');
        // The bytes are kept as uploaded: the owner gets back what they stored.
        expect(await response.text()).toBe(hostilePage);
      }
      // A range of it, and its 304, are no different.
      const part = await fetch(inline.url, { headers: { Range: 'bytes=0-14' } });
      expect(part.status).toBe(206);
      expectOpaqueAttachment(part);
      const again = await fetch(inline.url, { headers: { 'If-None-Match': part.headers.get('etag')! } });
      expect(again.status).toBe(304);
      expectSafetyHeaders(again);
    });

    it('does not serve SVG, HTML or XML inline when it is declared as audio or an image', async () => {
      const cases: Array<[string, string, string]> = [
        ['cover.wav', 'audio/wav', hostileSvg],
        ['track.mp3', 'audio/mpeg', hostilePage],
        ['cover.png', 'image/png', hostileSvg],
        ['song.m4a', 'audio/mp4', hostileXhtml],
      ];
      for (const [name, mimeType, body] of cases) {
        const { inline } = await stored(name, mimeType, Buffer.from(body));
        expectOpaqueAttachment(await fetch(inline.url));
      }
    });

    it('serves an empty file as an opaque attachment', async () => {
      const { inline } = await stored('empty.wav', 'audio/wav', new Uint8Array(0));
      const response = await fetch(inline.url);
      expect(response.status).toBe(200);
      expectOpaqueAttachment(response);
    });

    describe('real audio', () => {
      const tone = ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100:duration=0.5'];
      const audio: Array<{ name: string; args: string[]; declared: string; sniffed: string; bytes?: Buffer }> = [
        // Declared types that are wrong or vague: the bytes decide.
        { name: 'take.wav', args: ['-c:a', 'pcm_s16le'], declared: 'application/octet-stream', sniffed: 'audio/wav' },
        { name: 'take.mp3', args: ['-c:a', 'libmp3lame'], declared: 'audio/wav', sniffed: 'audio/mpeg' },
        { name: 'take.flac', args: ['-c:a', 'flac'], declared: 'text/html', sniffed: 'audio/flac' },
      ];
      beforeAll(async () => {
        for (const file of audio) file.bytes = await makeAudio(file.name, [...tone, ...file.args]);
      });

      it('serves WAV, MP3 and FLAC inline with the type of their bytes, not the declared one', async () => {
        for (const { name, declared, sniffed, bytes } of audio) {
          const { inline, download } = await stored(name, declared, bytes);
          const response = await fetch(inline.url);
          expect(response.status).toBe(200);
          expect(response.headers.get('content-type'), name).toBe(sniffed);
          expect(response.headers.get('content-disposition')).toBe(`inline; filename="${name}"`);
          expectSafetyHeaders(response);
          expect(Buffer.from(await response.arrayBuffer()).equals(bytes!)).toBe(true);
          // Seeking keeps the inline type; a download link stays an attachment of the same type.
          const seek = await fetch(inline.url, { headers: { Range: 'bytes=1000-1999' } });
          expect(seek.status).toBe(206);
          expect(seek.headers.get('content-type')).toBe(sniffed);
          expect(seek.headers.get('content-disposition')).toMatch(/^inline;/);
          expect(Buffer.from(await seek.arrayBuffer()).equals(bytes!.subarray(1000, 2000))).toBe(true);
          const attachment = await fetch(download.url);
          expect(attachment.headers.get('content-type')).toBe(sniffed);
          expect(attachment.headers.get('content-disposition')).toMatch(/^attachment;/);
        }
      });
    });

    it('serves artwork inline as its image type', async () => {
      const { api } = await t.as('listener@example.com');
      const { data: project } = await api.POST('/projects', { body: { name: 'Artwork' } });
      const { project: withArt } = (await api.uploadArtwork(project!.id, { name: 'cover.png', mimeType: 'image/png' }, onePixelPng)).data!;
      const image = await fetch(withArt.artwork!.url);
      expect(image.status).toBe(200);
      expect(image.headers.get('content-type')).toBe('image/png');
      expect(image.headers.get('content-disposition')).toBe('inline; filename="artwork.png"');
      expectSafetyHeaders(image);
    });

    it('serves a file named with a path as a plain name', async () => {
      const { download } = await stored('../../../../etc/passwd', 'text/plain', Buffer.from('root:x:0:0'));
      const response = await fetch(download.url);
      expect(response.headers.get('content-disposition')).toBe('attachment; filename="etc_passwd"');
    });
  });
});

describe('renditions and peaks, which we make ourselves', () => {
  const t = useTestServer('sqlite', { PROCESSING: 'in-process', JOB_POLL_MS: '50' });

  it('serves the renditions inline as audio, the JSON peaks inline as JSON, and the binary peaks as an attachment', async () => {
    const { api } = await t.as('producer@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Renditions' } });
    const projectid = project!.id;
    const wav = await makeAudio('mix.wav', ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=1', '-c:a', 'pcm_s16le']);
    const { box } = (await api.uploadFile(projectid, { name: 'mix.wav', mimeType: 'audio/wav' }, wav)).data!;
    expect(await waitForStatus(api, projectid, box.id)).toMatchObject({ status: 'ready', audio: { renditions: ['original', 'compressed', 'lossless'] } });

    for (const [variant, type] of [['compressed', 'audio/mp4'], ['lossless', 'audio/flac']] as const) {
      const response = await fetch(signDownload(t.server.ctx, box.id, 'inline', variant).url);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(type);
      expect(response.headers.get('content-disposition')).toMatch(/^inline;/);
      expectSafetyHeaders(response);
    }
    const path = { projectid, fileid: box.id };
    const json = await fetch((await api.GET('/projects/{projectid}/files/{fileid}/peaks', { params: { path } })).data!.url);
    expect(json.headers.get('content-type')).toMatch(/^application\/json(;|$)/);
    expect(json.headers.get('content-disposition')).toBe('inline; filename="mix.peaks.json"');
    expectSafetyHeaders(json);
    expect(await json.json()).toMatchObject({ version: 2, channels: 1 });
    const dat = await fetch((await api.GET('/projects/{projectid}/files/{fileid}/peaks', { params: { path, query: { format: 'dat' } } })).data!.url);
    expectOpaqueAttachment(dat);
    // Even a URL signed inline for the binary peaks gets an attachment.
    expectOpaqueAttachment(await fetch(signDownload(t.server.ctx, box.id, 'inline', 'peaks-dat').url));
  });
});

describe('streaming errors', () => {
  const t = useTestServer('sqlite');

  /** A logger that records what it is given, and lets a test await a message. */
  function recordingLogger() {
    const entries: Array<{ level: string; message: string; fields: Record<string, unknown> }> = [];
    const waiters: Array<{ match: (message: string) => boolean; resolve: () => void }> = [];
    const log = (level: string) => (message: string, fields: Record<string, unknown> = {}) => {
      entries.push({ level, message, fields });
      for (const waiter of waiters.filter((w) => w.match(message))) waiter.resolve();
    };
    const logger: Logger = { enabled: () => true, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
    const logged = (match: RegExp) =>
      entries.some((entry) => match.test(entry.message)) ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ match: (message) => match.test(message), resolve }));
    return { logger, entries, logged };
  }

  /** Swaps the server's logger (and, optionally, blob store) for the length of `body`. */
  async function withSwapped(t: Harness, swap: { logger: Logger; blobs?: BlobStore }, body: () => Promise<void>) {
    const { logger, blobs } = t.server.ctx;
    t.server.ctx.logger = swap.logger;
    if (swap.blobs) t.server.ctx.blobs = swap.blobs;
    try {
      await body();
    } finally {
      t.server.ctx.logger = logger;
      t.server.ctx.blobs = blobs;
    }
  }

  async function bigFile() {
    const { api } = await t.as('streamer@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Streams' } });
    const bytes = Buffer.alloc(16 * 1024 * 1024, 7);
    const { box } = (await api.uploadFile(project!.id, { name: 'big.bin', mimeType: 'application/octet-stream' }, bytes)).data!;
    return signDownload(t.server.ctx, box.id, 'attachment').url;
  }

  it('notes a listener who closes the download early at debug level, not as an error', async () => {
    const url = await bigFile();
    const { logger, entries, logged } = recordingLogger();
    await withSwapped(t, { logger }, async () => {
      const abort = new AbortController();
      const response = await fetch(url, { signal: abort.signal });
      const reader = response.body!.getReader();
      await reader.read();
      abort.abort();
      await logged(/closed by the listener/);
    });
    expect(entries.filter((entry) => entry.level === 'error')).toEqual([]);
  });

  it('logs a blob store that fails mid-stream, with the Error and its stack', async () => {
    const url = await bigFile();
    const { logger, entries, logged } = recordingLogger();
    const real = t.server.ctx.blobs;
    const failure = new Error('EIO: i/o error, read');
    // The real store, except that a whole-file read yields its first chunk, then fails as a dying disk would.
    const failingRead = (key: string, range?: { start: number; end: number }) =>
      range
        ? real.read(key, range)
        : Readable.from(
            (async function* () {
              yield Buffer.alloc(64 * 1024, 7);
              throw failure;
            })(),
          );
    const failing = new Proxy(real, {
      get: (target, name) => {
        if (name === 'read') return failingRead;
        const value = Reflect.get(target, name, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await withSwapped(t, { logger, blobs: failing }, async () => {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      await expect(response.arrayBuffer()).rejects.toThrow();
      await logged(/download failed while streaming/);
    });
    const errors = entries.filter((entry) => entry.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0].fields.err).toBe(failure);
    expect((errors[0].fields.err as Error).stack).toMatch(/EIO/);
  });
});
