/**
 * Baseline for the first audio after a click on Play: a plain page with a
 * bare <audio id="audio"> and a button "Play" whose click calls play(),
 * served by node:http with the very file the player page plays
 * (BENCH_AUDIO_FILE, sent as BENCH_AUDIO_TYPE). The element preloads
 * metadata, as the player page's does, and the file is served with byte
 * ranges (206), as the server's download endpoint serves it, so that the
 * browser fetches it the same way from both.
 *
 * Two variants tell apart what the player page adds:
 * - `/webaudio`: the element played through Web Audio, as the player page
 *   plays it (MediaElementSource → GainNode → destination, the context made
 *   and resumed in the click): what that path costs by itself.
 * - `/server-stream`: the bare element playing the player page's own
 *   signed stream URL from the server (BENCH_SERVER_AUDIO_URL; another
 *   origin, which a bare element may play without CORS): what the server's
 *   download endpoint costs against node:http.
 */
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';

const file = process.env.BENCH_AUDIO_FILE!;
const type = process.env.BENCH_AUDIO_TYPE ?? 'application/octet-stream';
const size = statSync(file).size;

const page = (script: string, src = '/audio') => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Bare audio</title></head>
<body><main id="app" data-state="ready">
<button type="button" id="play">Play</button>
<audio id="audio" preload="metadata" src="${src.replaceAll('&', '&amp;')}"></audio>
</main>
<script>
  const audio = document.getElementById('audio');
  ${script}
</script>
</body></html>`;

const playOnClick = `document.getElementById('play').addEventListener('click', () => void audio.play());`;
const pages: Record<string, string> = {
  '/': page(playOnClick),
  ...(process.env.BENCH_SERVER_AUDIO_URL ? { '/server-stream': page(playOnClick, process.env.BENCH_SERVER_AUDIO_URL) } : {}),
  '/webaudio': page(`document.getElementById('play').addEventListener('click', () => {
    const context = new AudioContext();
    context.createMediaElementSource(audio).connect(context.createGain()).connect(context.destination);
    void context.resume();
    void audio.play();
  });`),
};

const server = createServer((req, res) => {
  if (req.url === '/healthz') return void res.end('ok');
  const html = pages[req.url ?? ''];
  if (html) {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
    return void res.end(html);
  }
  if (req.url !== '/audio') {
    res.writeHead(404);
    return void res.end();
  }
  // RFC 9110 section 14: one range, bytes=first-[last]; anything else gets the whole file.
  const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
  const first = range ? Number(range[1]) : 0;
  const last = range?.[2] ? Math.min(Number(range[2]), size - 1) : size - 1;
  if (range && first >= size) {
    res.writeHead(416, { 'Content-Range': `bytes */${size}` });
    return void res.end();
  }
  res.writeHead(range ? 206 : 200, {
    'Content-Type': type,
    'Accept-Ranges': 'bytes',
    'Content-Length': String(last - first + 1),
    'Cache-Control': 'no-store',
    ...(range ? { 'Content-Range': `bytes ${first}-${last}/${size}` } : {}),
  });
  createReadStream(file, { start: first, end: last }).pipe(res);
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
