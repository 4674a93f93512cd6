/** Child-process helpers of the opt-in n8n run: stopping what it started, and free ports. */
import type { ChildProcess } from "node:child_process";
import net from "node:net";

/** Children spawned with `detached: true`: stopping one signals its whole process group. */
const groupLeaders = new WeakSet<ChildProcess>();

/** Resolves true once `child` exited, false after `ms`. */
export function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Stops one child this run started: SIGTERM to its process group (n8n starts a task runner of its own), SIGKILL
 * after `graceMs`. The child must have been spawned with `detached: true` for the group; otherwise only the child.
 */
export async function stopChild(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (await exited(child, 0)) return;
  const signal = (sig: NodeJS.Signals): void => {
    try {
      if (child.pid !== undefined && groupLeaders.has(child)) process.kill(-child.pid, sig);
      else child.kill(sig);
    } catch {
      // already gone
    }
  };
  signal("SIGTERM");
  if (await exited(child, graceMs)) return;
  signal("SIGKILL");
  await exited(child, graceMs);
}

/** Marks a child spawned with `detached: true`, so {@link stopChild} signals its whole process group. */
export function ownGroup(child: ChildProcess): ChildProcess {
  groupLeaders.add(child);
  return child;
}

/** A free TCP port on 127.0.0.1 (asked from the OS, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
