/**
 * Waveform peaks in the BBC audiowaveform format, computed from a stream of
 * 16-bit mono samples: each pixel is the min and max of `samplesPerPixel`
 * samples, scaled to 8 bits as audiowaveform does (value >> 8).
 *   .json  {version: 2, channels, sample_rate, samples_per_pixel, bits, length, data: [min, max, …]}
 *   .dat   the same in binary: a 24-byte little-endian header (version 2,
 *          flags: 1 = 8-bit, sample rate, samples per pixel, length,
 *          channels), then int8 min/max pairs.
 * It also counts the samples, which gives the exact decoded duration.
 */
export const PIXELS_PER_SECOND = 100;

export class WaveformBuilder {
  readonly samplesPerPixel: number;
  private data: number[] = [];
  private min = 0;
  private max = 0;
  private inPixel = 0;
  private carry: Buffer | undefined;
  samples = 0;

  constructor(readonly sampleRate: number) {
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
        this.data.push(min >> 8, max >> 8);
        inPixel = 0;
      }
    }
    this.min = min;
    this.max = max;
    this.inPixel = inPixel;
    this.samples += samples.length;
  }

  private closePixel() {
    this.data.push(this.min >> 8, this.max >> 8);
    this.inPixel = 0;
  }

  finish(): { json: Buffer; dat: Buffer; length: number } {
    if (this.inPixel > 0) this.closePixel();
    const length = this.data.length / 2;
    const json = Buffer.from(
      JSON.stringify({ version: 2, channels: 1, sample_rate: this.sampleRate, samples_per_pixel: this.samplesPerPixel, bits: 8, length, data: this.data }),
    );
    const dat = Buffer.alloc(24 + this.data.length);
    dat.writeInt32LE(2, 0); // version
    dat.writeUInt32LE(1, 4); // flags: 8-bit
    dat.writeInt32LE(this.sampleRate, 8);
    dat.writeInt32LE(this.samplesPerPixel, 12);
    dat.writeUInt32LE(length, 16);
    dat.writeInt32LE(1, 20); // channels
    this.data.forEach((value, i) => dat.writeInt8(value, 24 + i));
    return { json, dat, length };
  }
}
