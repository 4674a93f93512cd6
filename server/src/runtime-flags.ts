/**
 * The V8 flags `npm start` runs the server with (package.json `start`: `node <flags> server/dist/main.js`). The
 * benchmark and the process-level tests start `server/dist/main.js` with the same list, and a test keeps the start
 * script in step with it. V8 takes these only on the command line (not through NODE_OPTIONS, and not reliably once
 * the heap exists), so they cannot be set from inside the server.
 *
 * Measured with `npm run bench` (issue #4; PostgreSQL, server pinned to one core, 32 connections, 3 rounds each):
 * - default V8 heap: peak RSS 229 MB, list p99 40-48 ms;
 * - `--heap-growing-percent=150`: old space may grow to 2.5x the live heap after a full GC instead of up to 4x:
 *   peak RSS 184 MB, but more full GCs, whose helper threads compete with the main thread for the one core
 *   (list p99 51-54 ms);
 * - with `--single-threaded-gc` as well: GC work runs on the main thread without helper threads: RSS 191-197 MB and
 *   list p99 44-47 ms, throughput unchanged within noise.
 * - with `--max-semi-space-size=8` as well (MB; V8's default lets the young generation grow to 16 MB per semi-space):
 *   the server had gained the console, OpenAPI and more SQL paths, and its peak had reached 220 MB (RSS at rest
 *   119 MB). With a smaller young generation, same machine, quiet: peak 180 MB at 10k items (194 MB without),
 *   189 MB during the filtered pages at 1M items; list 1,332 vs 1,338 req/s, create 1,373 vs 1,355 req/s (within noise).
 *   A full run (bench/results/latest.md) peaked at 203 MB, during the filtered pages at 1M items, after every other
 *   phase had run. `--max-semi-space-size=4` was worse in a full run: peak 208 MB, create 0.52x bare (0.63x with 8),
 *   create with an Idempotency-Key 0.78x (0.99x with 8).
 * On a machine with idle cores for the GC helpers, leaving `--single-threaded-gc` out may lower pauses; run
 * `node [your flags] server/dist/main.js` to choose other flags.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ["--single-threaded-gc", "--heap-growing-percent=120", "--max-semi-space-size=8"];
