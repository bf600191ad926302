import { describe, expect, it } from 'vitest';
import { drawWaveform, WaveformBuilder } from './waveform.ts';

/** Two seconds of a 48 kHz ramp with a few spikes, as s16le bytes. */
function samples(): Buffer {
  const values = new Int16Array(96_000).map((_, i) => (i % 4800 === 7 ? 32767 : i % 9600 === 11 ? -32768 : ((i * 37) % 20000) - 10000));
  return Buffer.from(values.buffer);
}

describe('waveform', () => {
  it('draws on its thread exactly what the builder draws here, from chunks split anywhere (even inside a sample)', async () => {
    const bytes = samples();
    const here = new WaveformBuilder(48000);
    here.push(bytes);
    const expected = here.finish();
    const drawing = drawWaveform(48000);
    for (let at = 0, size = 1; at < bytes.length; at += size, size = (size * 7 + 3) % 70_001) drawing.push(bytes.subarray(at, at + size));
    const drawn = await drawing.finish();
    expect(drawn).toMatchObject({ samples: 96_000, samplesPerPixel: 480, length: 200 });
    expect(drawn.json.equals(expected.json)).toBe(true);
    expect(drawn.dat.equals(expected.dat)).toBe(true);
    const json = JSON.parse(drawn.json.toString());
    expect(json).toMatchObject({ version: 2, channels: 1, sample_rate: 48000, samples_per_pixel: 480, bits: 8, length: 200 });
    expect(Math.max(...json.data)).toBe(127);
    expect(Math.min(...json.data)).toBe(-128);
  });

  it('keeps drawings apart, and a cancelled one neither answers nor disturbs the others', async () => {
    const bytes = samples();
    const kept = drawWaveform(8000);
    const dropped = drawWaveform(48000);
    kept.push(bytes);
    dropped.push(bytes);
    dropped.cancel();
    await expect(dropped.finish()).rejects.toThrow(/already finished or cancelled/);
    expect(await kept.finish()).toMatchObject({ samples: 96_000, samplesPerPixel: 80, length: 1200 });
  });
});
