/**
 * Loaded first by `npm start`, `npm run worker` and the systemd units (`node --import ./server/compile-cache.js`):
 * turns on Node's compile cache before the first TypeScript file is read. With it, each file's stripped source and
 * V8 code are kept on disk, so a start after the first neither strips types again nor loads the stripper (about
 * 17 MiB of memory, for as long as the process runs), and starts sooner.
 *
 * JavaScript, not TypeScript: a .ts file here would load the stripper before it could turn the cache on.
 * The cache sits beside the code (node_modules/.cache), not in a shared temporary directory: whoever may write
 * there may already change the code. Where it cannot be written, Node runs without it.
 */
import module from 'node:module';
import { fileURLToPath } from 'node:url';

// Node 22.1 and newer (the bench also runs the server on older Nodes, which go on without the cache).
// With NODE_COMPILE_CACHE set (the systemd units), Node has turned the cache on already, there, and this changes nothing.
module.enableCompileCache?.(fileURLToPath(new URL('../node_modules/.cache/audio-share-compile-cache', import.meta.url)));
