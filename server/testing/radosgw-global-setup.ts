/**
 * The server project's global setup: it starts nothing (the S3 tests start
 * radosgw on first use, see s3.ts), but names this run, and at the end stops
 * radosgw if this run is the one that started it. One started by hand
 * (scripts/radosgw.sh start) is left running for the next run.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    radosgwOwner: string;
  }
}

export default function setup(project: TestProject) {
  const owner = randomUUID();
  project.provide('radosgwOwner', owner);
  return async () => {
    // The folder scripts/radosgw.sh uses, by the same rule.
    const dir = process.env.RADOSGW_DIR || join(tmpdir(), 'audio-share-radosgw');
    const startedBy = await readFile(join(dir, 'owner'), 'utf8').catch(() => '');
    if (startedBy.trim() !== owner) return;
    await promisify(execFile)(resolve(import.meta.dirname, '../../scripts/radosgw.sh'), ['stop'], { timeout: 120_000 });
  };
}
