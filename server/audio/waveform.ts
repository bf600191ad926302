/**
 * Waveform peaks in the BBC audiowaveform format, computed from a stream of
 * 16-bit mono samples: each pixel is the min and max of `samplesPerPixel`
 * samples, scaled to 8 bits as audiowaveform does (value >> 8).
 *   .json  {version: 2, channels, sample_rate, samples_per_pixel, bits, length, data: [min, max, …]}
 *   .dat   the same in binary: a 24-byte little-endian header (version 2,
 *          flags: 1 = 8-bit, sample rate, samples per pixel, length,
 *          channels), then int8 min/max pairs.
 * It also counts the samples, which gives the exact decoded duration.
 *
 * The per-sample loop runs on a worker thread (`drawWaveform`), never on
 * the thread that serves requests: a long file is tens of millions of
 * samples, and the API must keep answering while it is drawn.
 */
import { Worker } from 'node:worker_threads';

export const PIXELS_PER_SECOND = 100;

export interface Waveform {
  /** Samples counted: the exact decoded length. */
  samples: number;
  samplesPerPixel: number;
  /** Pixels. */
  length: number;
  json: Buffer;
  dat: Buffer;
}

export class WaveformBuilder {
  readonly samplesPerPixel: number;
  // Two int8 values per pixel, in a buffer that doubles as it fills (a number[] costs 8 bytes a value).
  private data = new Int8Array(1 << 16);
  private used = 0;
  private min = 0;
  private max = 0;
  private inPixel = 0;
  private carry: Buffer | undefined;
  samples = 0;

  readonly sampleRate: number;

  constructor(sampleRate: number) {
    this.sampleRate = sampleRate;
    this.samplesPerPixel = Math.max(1, Math.round(sampleRate / PIXELS_PER_SECOND));
  }

  /** Takes the next bytes of s16le samples; a sample may be split across chunks. */
  push(chunk: Buffer): void {
    let bytes = chunk;
    if (this.carry) {
      bytes = Buffer.concat([this.carry, chunk]);
      this.carry = undefined;
    }
    const whole = bytes.length - (bytes.length % 2);
    if (whole < bytes.length) this.carry = Buffer.from(bytes.subarray(whole));
    // A typed view reads samples far faster than readInt16LE; it needs an even byte offset (this machine is little-endian, as the samples are).
    const aligned = bytes.byteOffset % 2 === 0 ? bytes : Buffer.from(bytes);
    const samples = new Int16Array(aligned.buffer, aligned.byteOffset, whole / 2);
    const perPixel = this.samplesPerPixel;
    let { min, max, inPixel } = this;
    for (let i = 0; i < samples.length; i++) {
      const sample = samples[i];
      if (inPixel === 0) {
        min = sample;
        max = sample;
      } else if (sample < min) min = sample;
      else if (sample > max) max = sample;
      if (++inPixel === perPixel) {
        this.pushPixel(min, max);
        inPixel = 0;
      }
    }
    this.min = min;
    this.max = max;
    this.inPixel = inPixel;
    this.samples += samples.length;
  }

  private pushPixel(min: number, max: number) {
    if (this.used + 2 > this.data.length) {
      const larger = new Int8Array(this.data.length * 2);
      larger.set(this.data);
      this.data = larger;
    }
    this.data[this.used++] = min >> 8;
    this.data[this.used++] = max >> 8;
  }

  finish(): Waveform {
    if (this.inPixel > 0) {
      this.pushPixel(this.min, this.max);
      this.inPixel = 0;
    }
    const data = this.data.subarray(0, this.used);
    const length = this.used / 2;
    const json = Buffer.from(
      JSON.stringify({ version: 2, channels: 1, sample_rate: this.sampleRate, samples_per_pixel: this.samplesPerPixel, bits: 8, length, data: Array.from(data) }),
    );
    const dat = Buffer.alloc(24 + data.length);
    dat.writeInt32LE(2, 0); // version
    dat.writeUInt32LE(1, 4); // flags: 8-bit
    dat.writeInt32LE(this.sampleRate, 8);
    dat.writeInt32LE(this.samplesPerPixel, 12);
    dat.writeUInt32LE(length, 16);
    dat.writeInt32LE(1, 20); // channels
    dat.set(new Uint8Array(data.buffer, data.byteOffset, data.length), 24);
    return { samples: this.samples, samplesPerPixel: this.samplesPerPixel, length, json, dat };
  }
}

/** A waveform being drawn on the worker thread. */
export interface WaveformDrawing {
  /** Sends the next bytes of s16le samples to the thread. */
  push(chunk: Buffer): void;
  /** The waveform of every byte pushed. */
  finish(): Promise<Waveform>;
  /** Throws the drawing away. */
  cancel(): void;
}

/** Messages to the thread, and its answers. */
export type ToThread =
  | { type: 'start'; id: number; sampleRate: number }
  | { type: 'push'; id: number; bytes: ArrayBuffer }
  | { type: 'finish'; id: number }
  | { type: 'cancel'; id: number };
export type FromThread =
  | { type: 'done'; id: number; samples: number; samplesPerPixel: number; length: number; json: ArrayBuffer; dat: ArrayBuffer }
  | { type: 'failed'; id: number; message: string };

const BATCH_BYTES = 256 * 1024;

/** A drawing the thread works on: who waits for its result, or the failure to give them when they ask. */
interface Open {
  waiting?: { resolve(waveform: Waveform): void; reject(error: Error): void };
  failure?: Error;
}

/**
 * The one thread that draws this process's waveforms, started on first use.
 * It keeps the process alive only while a drawing is under way.
 */
class WaveformThread {
  private thread: Worker | undefined;
  private open = new Map<number, Open>();
  private nextId = 1;

  draw(sampleRate: number): WaveformDrawing {
    const id = this.nextId++;
    const thread = this.ensure();
    this.open.set(id, {});
    thread.ref();
    this.send({ type: 'start', id, sampleRate });
    // Chunks are gathered and sent BATCH_BYTES at a time: each message costs the sending thread far more than copying the bytes does.
    let batch: Buffer[] = [];
    let batched = 0;
    const flush = () => {
      if (batched === 0) return;
      // A copy of its own (Buffer.concat allocates one this large outside the shared pool), which the thread takes over.
      const copy = Buffer.concat(batch, batched);
      const bytes = (copy.buffer.byteLength === copy.length ? copy.buffer : copy.buffer.slice(copy.byteOffset, copy.byteOffset + copy.length)) as ArrayBuffer;
      batch = [];
      batched = 0;
      this.send({ type: 'push', id, bytes }, [bytes]);
    };
    return {
      push: (chunk) => {
        if (!this.open.has(id)) return;
        batch.push(chunk);
        batched += chunk.length;
        if (batched >= BATCH_BYTES) flush();
      },
      finish: () =>
        new Promise<Waveform>((resolve, reject) => {
          const entry = this.open.get(id);
          if (!entry || entry.waiting) return reject(new Error('This waveform was already finished or cancelled.'));
          if (entry.failure) {
            this.settled(id);
            return reject(entry.failure);
          }
          entry.waiting = { resolve, reject };
          flush();
          this.send({ type: 'finish', id });
        }),
      cancel: () => {
        const entry = this.open.get(id);
        // A drawing someone waits for ends with the thread's answer; one nobody waits for is dropped.
        if (!entry || entry.waiting) return;
        this.settled(id);
        this.send({ type: 'cancel', id });
      },
    };
  }

  private send(message: ToThread, transfer: ArrayBuffer[] = []) {
    this.thread?.postMessage(message, transfer);
  }

  private settled(id: number) {
    this.open.delete(id);
    if (this.open.size === 0) this.thread?.unref();
  }

  private fail(id: number, entry: Open, error: Error) {
    if (entry.waiting) {
      this.settled(id);
      entry.waiting.reject(error);
    } else {
      // Given to whoever asks for the result; cancel() drops it.
      entry.failure = error;
    }
  }

  private ensure(): Worker {
    if (this.thread) return this.thread;
    const thread = new Worker(new URL('./waveform-thread.ts', import.meta.url));
    thread.unref();
    thread.on('message', (message: FromThread) => {
      const entry = this.open.get(message.id);
      if (!entry) return;
      if (message.type === 'failed') return this.fail(message.id, entry, new Error(`Drawing the waveform failed: ${message.message}`));
      this.settled(message.id);
      entry.waiting?.resolve({ ...message, json: Buffer.from(message.json), dat: Buffer.from(message.dat) });
    });
    const lost = (error: Error) => {
      if (this.thread !== thread) return;
      this.thread = undefined;
      for (const [id, entry] of this.open) this.fail(id, entry, error);
    };
    thread.on('error', lost);
    thread.on('exit', (code) => lost(new Error(`The waveform thread exited with code ${code}.`)));
    this.thread = thread;
    return thread;
  }
}

const waveformThread = new WaveformThread();

/** Starts drawing the waveform of s16le mono samples at `sampleRate`, on the waveform thread. */
export function drawWaveform(sampleRate: number): WaveformDrawing {
  return waveformThread.draw(sampleRate);
}
