/** Helpers for the upload tests: waiting on a condition, PUTs whose body the test sends piece by piece, a logger that records. */
import { request } from 'node:http';
import { readdir } from 'node:fs/promises';
import { sep } from 'node:path';
import type { Logger } from '../lib/logger.ts';
import { TEMPORARY_PREFIX } from '../blobs/local-disk-blob-store.ts';

export type PutOutcome = { status: number; body: { type?: string; detail?: string; status?: string } & Record<string, unknown> } | { error: Error };

/**
 * A PUT of `size` bytes whose body the test sends piece by piece, as a slow
 * client does. `outcome` settles with the response, or with the error that
 * ended the request (a refused or cut connection); it never rejects.
 */
export function streamedPut(url: string, headers: Record<string, string>, size: number) {
  const target = new URL(url);
  const req = request({
    host: target.hostname,
    port: target.port,
    path: target.pathname + target.search,
    method: 'PUT',
    headers: { ...headers, 'Content-Length': String(size) },
    agent: false,
  });
  let responded: ((status: number) => void) | undefined;
  const responseStarted = new Promise<number>((resolve) => (responded = resolve));
  const outcome = new Promise<PutOutcome>((resolve) => {
    req.on('error', (error) => resolve({ error }));
    req.on('response', async (res) => {
      responded?.(res.statusCode!);
      const chunks: Buffer[] = [];
      try {
        for await (const chunk of res) chunks.push(chunk);
      } catch (error) {
        return resolve({ error: error as Error });
      }
      const text = Buffer.concat(chunks).toString();
      resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : {} });
    });
  });
  req.flushHeaders();
  return {
    outcome,
    /** Settles with the status once the response has begun (an early refusal), while the body may still be on its way. */
    responseStarted,
    /** Sends bytes, waiting while the connection is full; answers false when the request has ended (the server answered or cut it). */
    async send(bytes: Buffer): Promise<boolean> {
      if (req.destroyed) return false;
      if (req.write(bytes)) return true;
      return new Promise<boolean>((resolve) => {
        const done = (value: boolean) => () => {
          req.off('drain', onDrain);
          req.off('close', onClose);
          resolve(value);
        };
        const onDrain = done(true);
        const onClose = done(false);
        req.once('drain', onDrain);
        req.once('close', onClose);
      });
    },
    end: () => req.end(),
    cut: () => req.destroy(),
  };
}

export interface LogEntry {
  level: string;
  message: string;
  fields: Record<string, unknown>;
}

/** A logger that keeps what it is given, objects and all, for tests to inspect. */
export function recordingLogger(): { logger: Logger; entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at = (level: string) => (message: string, fields: Record<string, unknown> = {}) => void entries.push({ level, message, fields });
  return { entries, logger: { enabled: () => true, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

/** The temporary files of the local-disk blob store under `root`, as paths relative to it. */
export async function temporaryFiles(root: string): Promise<string[]> {
  try {
    return (await readdir(root, { recursive: true })).filter((path) => path.split(sep).pop()!.startsWith(TEMPORARY_PREFIX));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
