/**
 * Memory breakdown probe, preloaded into the server only when BENCH_MEM_PROBE=1 (`node --require` this file):
 * appends `process.memoryUsage()` as one JSON line to BENCH_MEM_FILE every 250 ms, so the report can say whether
 * the RSS is V8 heap, external memory (WebAssembly, buffers) or the rest. Plain CommonJS: no build step.
 */
"use strict";
const fs = require("node:fs");

const file = process.env.BENCH_MEM_FILE;
if (file) {
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    fs.appendFile(
      file,
      JSON.stringify({ t: Date.now(), rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers }) + "\n",
      () => undefined,
    );
  }, 250);
  timer.unref();
}
