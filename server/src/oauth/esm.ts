/**
 * Loads an ES module from this CommonJS server. TypeScript compiles `import()` to `require()` under
 * `module: commonjs`, which cannot load an ESM-only package such as `oidc-provider`; a real `import()` built at run
 * time stays native (Node 20+, and jest with `--experimental-vm-modules`).
 */
export const importEsm = new Function("specifier", "return import(specifier)") as <T = unknown>(specifier: string) => Promise<T>;
