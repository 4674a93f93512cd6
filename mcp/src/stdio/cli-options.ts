/**
 * The `stageline-mcp` command line (CONTRACT "MCP server"): `--read-only`, `--toolsets=items,tasks,...|all`
 * (`--toolsets items,tasks` too), `--help`; the API key and server from STAGELINE_API_KEY and STAGELINE_BASE_URL
 * (default http://localhost:3000, what `npm start` serves).
 */
import { parseToolsets } from "../registry";
import type { Toolset } from "../tool-definition";

/** The server `npm start` runs, when STAGELINE_BASE_URL is not set. */
export const DEFAULT_BASE_URL = "http://localhost:3000";

export const USAGE = `Usage: stageline-mcp [--read-only] [--toolsets=items,tasks,pipelines,notes,people,events,note_edits,webhooks|all]

Serves the Stageline tools to an MCP client over stdio.
Environment: STAGELINE_API_KEY (required), STAGELINE_BASE_URL (default ${DEFAULT_BASE_URL}).
Default toolsets: items, tasks, pipelines, notes, people, events. The API key's scopes decide which tools exist.`;

/** What the command line and environment ask for. */
export interface CliOptions {
  apiKey: string;
  baseUrl: string;
  readOnly: boolean;
  toolsets: Toolset[] | undefined;
}

/**
 * Parses `argv` (without node and the script) and `env`.
 * @returns the options, or `"help"` for --help.
 * @throws Error with a message for the user (an unknown option, a missing key, a bad toolset or URL); the message
 * never contains the key.
 */
export function parseCli(argv: readonly string[], env: NodeJS.ProcessEnv): CliOptions | "help" {
  let readOnly = false;
  let toolsets: Toolset[] | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--help" || arg === "-h") return "help";
    else if (arg === "--read-only") readOnly = true;
    else if (arg.startsWith("--toolsets=")) toolsets = parseToolsets(arg.slice("--toolsets=".length));
    else if (arg === "--toolsets" && i + 1 < argv.length) toolsets = parseToolsets(argv[++i]);
    else throw new Error(`Unknown option ${JSON.stringify(arg.split("=")[0])}.\n${USAGE}`);
  }
  const apiKey = env.STAGELINE_API_KEY?.trim();
  if (!apiKey) throw new Error(`STAGELINE_API_KEY is not set.\n${USAGE}`);
  const baseUrl = (env.STAGELINE_BASE_URL?.trim() || DEFAULT_BASE_URL).replace(/\/+$/, "");
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new Error("STAGELINE_BASE_URL must be the server's http(s) URL, e.g. https://stageline.example.com.");
  }
  if (!/^https?:$/.test(url.protocol) || url.username || url.password) {
    throw new Error("STAGELINE_BASE_URL must be an http(s) URL without user info, e.g. https://stageline.example.com.");
  }
  return { apiKey, baseUrl, readOnly, toolsets };
}
