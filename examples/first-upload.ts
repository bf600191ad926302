/**
 * A partner's first hour, as a script: make a player, upload an audio file
 * into it, wait until the server has analysed it, and print the link that
 * opens the player. The README's "A first call" runs exactly this, and
 * examples/first-upload.test.ts runs it against a real server.
 *
 *   TOKEN=… node examples/first-upload.ts mix.wav
 *
 * API_URL defaults to a server started with `npm start`; point it at the mock
 * (`npm run mock`, then API_URL=http://127.0.0.1:4010/api/v1) to try the same
 * calls without a server: the mock answers with the spec's examples.
 */
import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { createApiClient } from '../generated/client.ts';

const apiUrl = process.env.API_URL ?? 'http://localhost:8080/api/v1';
const token = process.env.TOKEN;
const path = process.argv[2];
if (!token || !path) {
  console.error('Usage: TOKEN=<bearer token> [API_URL=<server>/api/v1] node examples/first-upload.ts <audio file>');
  process.exit(2);
}

const audioTypes: Record<string, string> = { '.wav': 'audio/wav', '.mp3': 'audio/mpeg', '.flac': 'audio/flac', '.m4a': 'audio/mp4', '.ogg': 'audio/ogg', '.aif': 'audio/aiff', '.aiff': 'audio/aiff' };
const mimeType = audioTypes[extname(path).toLowerCase()] ?? 'application/octet-stream';

const api = createApiClient({ baseUrl: apiUrl, token });

// A partner's first run often has no server behind API_URL: say so in one line, not with a stack trace.
process.on('uncaughtException', (error) => {
  // fetch() fails with this TypeError when no HTTP answer came at all (refused, unknown host, reset); its cause says which.
  if (error instanceof TypeError && error.message === 'fetch failed') {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    console.error(`Nothing answers at ${apiUrl} (${cause?.code ?? cause?.message ?? 'no answer'}): start a server there with npm start, or set API_URL to your server's API, such as API_URL=https://audio.example.org/api/v1.`);
  } else {
    console.error(`${error.name}: ${error.message}`);
  }
  process.exit(1);
});

// 1. A player. Without a projectid, it gets a new project of its own, named after it.
const player = await api.POST('/players', { body: { name: 'My first player' } });
if (player.error) fail('Creating the player', player.error);
console.log(`Player ${player.data.id} in project ${player.data.projectid}`);

// 2. The file, in two steps (a signed upload URL, then a PUT of the bytes), with progress.
const bytes = await readFile(path);
const uploaded = await api.uploadFile(player.data.projectid, { name: basename(path), mimeType }, bytes, {
  onProgress: (sent, total) => process.stdout.write(`\rUploading ${basename(path)}: ${Math.round((100 * sent) / total)} %`),
});
process.stdout.write('\n');
if (uploaded.error) fail('Uploading', uploaded.error);

// 3. The server analyses audio in the background (duration, loudness, waveform, renditions).
const file = await api.waitUntilReady(uploaded.data, { timeoutMs: 120_000 });
if (file.error) fail('Waiting for the analysis', file.error);
if (file.data.status !== 'ready') fail('Analysing', { detail: `the file is ${file.data.status}: ${file.data.statusReason ?? ''}` });
console.log(`Ready: ${file.data.name}, ${file.data.duration} s, ${file.data.audio?.loudness.integratedLufs ?? '?'} LUFS`);

// 4. The link to send to a listener.
console.log(`Open the player: ${player.data.playerUrl}`);

function fail(what: string, problem: { detail?: string; title?: string }): never {
  console.error(`${what} failed: ${problem.detail ?? problem.title ?? 'unknown error'}`);
  process.exit(1);
}
