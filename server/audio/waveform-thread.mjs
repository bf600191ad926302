// The entry of the waveform thread (waveform.ts starts it). A worker thread
// does not inherit the TypeScript loader of the process that starts it, so
// it loads its TypeScript through tsx, as `npm start` does.
import { tsImport } from 'tsx/esm/api';

await tsImport('./waveform-thread.ts', import.meta.url);
