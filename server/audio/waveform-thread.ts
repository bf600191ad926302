/** The waveform thread: draws the waveforms the request thread sends it samples for (see waveform.ts). */
import { parentPort } from 'node:worker_threads';
import { WaveformBuilder, type FromThread, type ToThread } from './waveform.ts';

const port = parentPort!;
const drawings = new Map<number, WaveformBuilder>();

/** A copy in memory of its own, which can be handed over without detaching anything else. */
const own = (bytes: Buffer) => new Uint8Array(bytes).buffer as ArrayBuffer;

port.on('message', (message: ToThread) => {
  try {
    if (message.type === 'start') drawings.set(message.id, new WaveformBuilder(message.sampleRate));
    else if (message.type === 'push') drawings.get(message.id)?.push(Buffer.from(message.bytes));
    else if (message.type === 'cancel') drawings.delete(message.id);
    else if (message.type === 'finish') {
      const builder = drawings.get(message.id);
      if (!builder) throw new Error(`No waveform ${message.id} is being drawn.`);
      drawings.delete(message.id);
      const { samples, samplesPerPixel, length, json, dat } = builder.finish();
      const answer: FromThread = { type: 'done', id: message.id, samples, samplesPerPixel, length, json: own(json), dat: own(dat) };
      port.postMessage(answer, [answer.json, answer.dat]);
    }
  } catch (error) {
    drawings.delete(message.id);
    port.postMessage({ type: 'failed', id: message.id, message: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies FromThread);
  }
});
