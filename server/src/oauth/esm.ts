/**
 * Loads an ES module from this CommonJS server. TypeScript compiles `import()` to `require()` under
 * `module: commonjs`, which cannot load an ESM-only package such as `oidc-provider`; a real `import()` built at run
 * time stays native (Node 20+, and jest with `--experimental-vm-modules`).
 *
 * The function's source carries a unique comment: V8 caches compiled `new Function` code by its source, and under
 * jest (one vm context per test file, in one process) a cached function keeps the dynamic-import hook of the file
 * that compiled it first, which fails with "Test environment has been torn down" once that file is done.
 */
export const importEsm = new Function("specifier", `return import(specifier); /* ${process.pid}-${Date.now()}-${Math.random()} */`) as <T = unknown>(
  specifier: string,
) => Promise<T>;
