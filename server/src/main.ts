/**
 * `npm start`: starts the server from the environment (see config/config.ts), prints the demo API key, the console
 * URL and the demo owner's email and password when the database was empty, and shuts down gracefully on SIGTERM/SIGINT (PGlite is closed, or the process never exits).
 */
import { startServer } from "./server";

async function main(): Promise<void> {
  const running = await startServer();
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    running.ctx.logger.info({ signal }, "shutting down");
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    running.close().then(
      () => process.exit(0),
      (err) => {
        running.ctx.logger.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  if (running.demoApiKey) {
    process.stdout.write(`Demo API key: ${running.demoApiKey}\n`);
  }
  if (running.demoUser) {
    // The public origin (PUBLIC_URL, else http://127.0.0.1:<port>): the OAuth issuer, so a console session made here is
    // the one the OAuth consent page (same origin) finds.
    process.stdout.write(`Console: ${running.ctx.publicOrigin()}/console/\n`);
    process.stdout.write(`Demo user: ${running.demoUser.email}\n`);
    process.stdout.write(`Demo password: ${running.demoUser.password}\n`);
  }
  // The address it really listens on (HOST; in development and test mode 127.0.0.1 unless HOST says otherwise).
  process.stdout.write(`Stageline listening on ${running.listenUrl} (database: ${running.db.kind})\n`);
  if (running.listenUrl !== running.url) process.stdout.write(`Every interface: from this machine use ${running.url}\n`);
  if (running.metricsUrl) process.stdout.write(`Prometheus metrics: ${running.metricsUrl}\n`);
  if (running.ctx.config.mode !== "production") {
    const why = process.env.NODE_ENV ? `NODE_ENV=${process.env.NODE_ENV}` : "NODE_ENV is not set";
    process.stdout.write(
      `WARNING: ${running.ctx.config.mode} mode (${why}): webhook targets may use http and loopback addresses. ` +
        `Set NODE_ENV=production for any server others can reach.\n`,
    );
  }
}

main().catch((err) => {
  process.stderr.write(`Stageline failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
