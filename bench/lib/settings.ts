/** The knobs every part shares, from the environment (bench/README.md lists them all). */
import { resolve } from 'node:path';

/** The repository's root, where the bench runs from. */
export const root = resolve(import.meta.dirname, '../..');
/** Each read run's length (autocannon's duration). */
export const seconds = Number(process.env.BENCH_SECONDS ?? 10);
/** The size of the upload parts' one PUT. */
export const uploadBytes = Number(process.env.BENCH_UPLOAD_BYTES ?? 1024 ** 3);
/** Each part alternates its runs for this many rounds and reports medians. */
export const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
