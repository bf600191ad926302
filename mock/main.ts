/**
 * `npm run mock`: the partner mock on http://127.0.0.1:4010/api/v1.
 * PORT and HOST choose where it listens, PUBLIC_URL the URL that URLs in
 * its answers start with (when clients reach it through another address).
 * It prints the API's base URL once it listens, and stops on SIGINT or
 * SIGTERM.
 */
import { startMock } from './mock-server.ts';

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

const port = Number(process.env.PORT ?? '4010');
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`PORT must be a port number (0 to 65535), not "${process.env.PORT}".`);
const host = process.env.HOST || '127.0.0.1';
const publicUrl = process.env.PUBLIC_URL || undefined;
if (publicUrl && !/^https?:\/\/[^/]+/.test(publicUrl)) fail(`PUBLIC_URL must be an http:// or https:// URL, not "${publicUrl}".`);

const mock = await startMock({ port, host, publicUrl, log: (line) => console.log(line) }).catch((error: NodeJS.ErrnoException) =>
  fail(
    error.code === 'EADDRINUSE'
      ? `Port ${port} on ${host} is in use (another mock?). Stop it, or choose another port: PORT=4011 npm run mock`
      : `The mock could not start: ${error.message}`,
  ),
);
console.log(`Mock API listening at ${mock.apiUrl}`);
console.log(`Any bearer token is accepted; answers are the spec's examples (Prefer: code=404 picks another). Reference: ${mock.url}/docs`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    mock.stop().then(
      () => process.exit(0),
      (error: Error) => fail(`The mock did not stop cleanly: ${error.message}`),
    );
  });
}
