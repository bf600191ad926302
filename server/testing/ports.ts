/** Ports for tests that start servers of their own (child processes, nginx). */
import { createServer } from 'node:net';

/** A loopback port nothing listens on now (the OS picks it; a race with another process is possible but rare). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((listening) => probe.listen(0, '127.0.0.1', listening));
  const { port } = probe.address() as { port: number };
  await new Promise((closed) => probe.close(closed));
  return port;
}
