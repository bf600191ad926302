/**
 * Baseline for uploads: bare node:http writing the request body to a file,
 * with the same durability as the real server (fsync before answering).
 */
import { createServer } from 'node:http';
import { createWriteStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { join } from 'node:path';

const dir = process.env.DATA_DIR!;
let n = 0;
const server = createServer(async (req, res) => {
  const file = join(dir, `upload-${n++}`);
  await pipeline(req, createWriteStream(file, { highWaterMark: 1 << 20 }));
  const handle = await open(file, 'r+');
  await handle.sync();
  await handle.close();
  res.end('{}');
  await rm(file, { force: true });
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
