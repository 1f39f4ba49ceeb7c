/**
 * `npm start` and the image's CMD: the combined server (combined-server.ts), after turning on
 * Node's compile cache. Compiled bytecode of this code and its dependencies is kept on disk
 * (NODE_COMPILE_CACHE, else the OS temp dir), so a restarted process skips most compiling
 * (~120 ms of a ~500 ms start). Node checks each file's hash, so a stale entry is never used;
 * an unwritable directory only means nothing is cached.
 */
import { enableCompileCache } from "node:module";

enableCompileCache();
await import("./combined-server.js");
