/**
 * `npm run admin -- <command>`: companies, API keys, console users and pipeline import from the command line.
 * Arguments are parsed here (util.parseArgs); the work is done by the admin API (admin-api.ts), reached over the
 * running server or directly on the database (admin-client.ts). Output formats live in cli-output.ts.
 *
 * Every command prints on stderr which database it used and whether through a running server. It opens only a
 * database that already holds Stageline's schema; with `--init` it creates a new one (admin-client.ts `connectAdmin`).
 *
 * Exit codes: 0 success, 1 error (unknown id, invalid input, database or server unreachable, no database without
 * `--init`), 2 usage error.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import type { AdminApi } from "./admin-api";
import { connectAdmin, type AdminConnection } from "./admin-client";
import * as output from "./cli-output";

/** Where the CLI writes, and its environment (tests pass their own). */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

type Values = Record<string, string | boolean | undefined>;

interface Command {
  group: string;
  name: string;
  /** Arguments after the command name, as shown in usage. */
  args: string;
  summary: string;
  /** Help text after the usage line. */
  help: string;
  options: NonNullable<ParseArgsConfig["options"]>;
  /** Names of the positional arguments, all required. */
  positionals: string[];
  /** Options that must be given. */
  required?: string[];
  /** Reads local input (files) before the data is reached, so such mistakes fail fast. */
  load?(values: Values, io: CliIo): unknown;
  run(api: AdminApi, values: Values, positionals: string[], io: CliIo, loaded: unknown): Promise<void>;
}

/** Thrown for a usage error: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
    this.name = "UsageError";
  }
}

/** Thrown for a failure that is not a problem from the admin API (e.g. an unreadable file): exit code 1. */
export class CliError extends Error {
  override name = "CliError";
}

const PROGRAM = "npm run admin --";
/** Options every command takes. `--init`: create the database when there is none (otherwise the CLI refuses). */
const GLOBAL_OPTIONS = { init: { type: "boolean" } } as const;
const json = { json: { type: "boolean" } } as const;
const JSON_HELP = "  --json                 print the result as one JSON object on stdout";

const COMMANDS: Command[] = [
  {
    group: "companies",
    name: "create",
    args: "--name NAME [--json]",
    summary: "Create a company and print its id",
    help: [
      "Creates a company (subscription active) and prints its id.",
      "",
      "Options:",
      "  --name NAME            company name (1 to 255 characters)",
      JSON_HELP + ': {"id","name"}',
    ].join("\n"),
    options: { name: { type: "string" }, ...json },
    positionals: [],
    required: ["name"],
    run: async (api, values, _positionals, io) => {
      const company = await api.createCompany({ name: values.name });
      io.stdout(values.json ? output.asJson(company) : `${company.id}\n`);
    },
  },
  {
    group: "companies",
    name: "set-subscription",
    args: "COMPANY_ID --active|--inactive [--json]",
    summary: "Switch a company's API access on or off",
    help: [
      "Sets the company's subscription. While it is inactive every API key of the company gets",
      "402 subscription_inactive.",
      "",
      "Options:",
      "  --active               the subscription is active",
      "  --inactive             the subscription is inactive",
      JSON_HELP + ': {"id","name","subscription_active"}',
    ].join("\n"),
    options: { active: { type: "boolean" }, inactive: { type: "boolean" }, ...json },
    positionals: ["COMPANY_ID"],
    run: async (api, values, [companyId], io) => {
      const company = await api.setSubscription(companyId!, { active: values.active === true });
      io.stdout(values.json ? output.asJson(company) : output.subscriptionText(company));
    },
  },
  {
    group: "keys",
    name: "create",
    args: "--company COMPANY_ID --name NAME [--scopes a,b] [--expires-at ISO] [--json]",
    summary: "Create an API key and print it (shown once)",
    help: [
      "Creates an API key for a company and prints it. The key is shown once and cannot be retrieved later.",
      "",
      "Options:",
      "  --company COMPANY_ID   the company the key belongs to",
      "  --name NAME            key name, e.g. Zapier",
      "  --scopes a,b           comma-separated scopes (default: all): " + output.scopeList(),
      "  --expires-at ISO       expiry as an ISO 8601 date-time with time zone, e.g. 2027-01-01T00:00:00Z",
      JSON_HELP + ': {"id","name","scopes","key"}',
    ].join("\n"),
    options: { company: { type: "string" }, name: { type: "string" }, scopes: { type: "string" }, "expires-at": { type: "string" }, ...json },
    positionals: [],
    required: ["company", "name"],
    run: async (api, values, _positionals, io) => {
      const body: Record<string, unknown> = { company_id: values.company, name: values.name };
      if (typeof values.scopes === "string") {
        body.scopes = values.scopes
          .split(",")
          .map((s) => s.trim())
          .filter((s) => s !== "");
      }
      if (values["expires-at"] !== undefined) body.expires_at = values["expires-at"];
      const key = await api.createKey(body);
      io.stdout(values.json ? output.asJson(key) : output.keyCreatedText(key));
    },
  },
  {
    group: "keys",
    name: "list",
    args: "--company COMPANY_ID [--json]",
    summary: "List a company's API keys (never the key values)",
    help: [
      "Lists the company's API keys, newest first: id, name, prefix, scopes, expiry, revocation, last use.",
      "Key values are never shown.",
      "",
      "Options:",
      "  --company COMPANY_ID   the company",
      '  --json                 print one JSON object on stdout: {"company_id", "keys": [...]}',
    ].join("\n"),
    options: { company: { type: "string" }, ...json },
    positionals: [],
    required: ["company"],
    run: async (api, values, _positionals, io) => {
      const keys = await api.listKeys(String(values.company));
      io.stdout(values.json ? output.asJson({ company_id: String(values.company), keys }) : output.keyTable(keys));
    },
  },
  {
    group: "keys",
    name: "rename",
    args: "KEY_ID --name NEW [--json]",
    summary: "Rename an API key",
    help: ["Renames an API key.", "", "Options:", "  --name NEW             the new name", JSON_HELP + " (the key, without its value)"].join("\n"),
    options: { name: { type: "string" }, ...json },
    positionals: ["KEY_ID"],
    required: ["name"],
    run: async (api, values, [keyId], io) => {
      const key = await api.renameKey(keyId!, { name: values.name });
      io.stdout(values.json ? output.asJson(key) : `Renamed key ${key.id} to ${JSON.stringify(key.name)}.\n`);
    },
  },
  {
    group: "keys",
    name: "revoke",
    args: "KEY_ID [--json]",
    summary: "Revoke an API key",
    help: [
      "Revokes an API key: from now on requests with it get 401 invalid_api_key. Revoking twice keeps the first",
      "revocation time.",
      "",
      "Options:",
      JSON_HELP + " (the key, without its value)",
    ].join("\n"),
    options: { ...json },
    positionals: ["KEY_ID"],
    run: async (api, values, [keyId], io) => {
      const key = await api.revokeKey(keyId!);
      io.stdout(values.json ? output.asJson(key) : `Revoked key ${key.id} (${JSON.stringify(key.name)}) at ${key.revoked_at}.\n`);
    },
  },
  {
    group: "users",
    name: "create",
    args: "--company COMPANY_ID --email EMAIL --role owner|admin|member [--json]",
    summary: "Create a console user and print a generated password (shown once)",
    help: [
      "Creates a user who signs in to the console (/console) and prints a generated password, shown once.",
      "Roles: owner (everything, team included), admin (API keys, webhooks, pipelines), member (read-only).",
      "",
      "Options:",
      "  --company COMPANY_ID   the company the user belongs to",
      "  --email EMAIL          the sign-in email (unique, case-insensitive)",
      "  --role ROLE            owner, admin or member",
      JSON_HELP + ': {"id","email","role","company_id","password"}',
    ].join("\n"),
    options: { company: { type: "string" }, email: { type: "string" }, role: { type: "string" }, ...json },
    positionals: [],
    required: ["company", "email", "role"],
    run: async (api, values, _positionals, io) => {
      const user = await api.createUser({ company_id: values.company, email: values.email, role: values.role });
      io.stdout(values.json ? output.asJson(user) : output.userPasswordText(user, "created"));
    },
  },
  {
    group: "users",
    name: "list",
    args: "--company COMPANY_ID [--json]",
    summary: "List a company's console users",
    help: ["Lists the company's console users: id, email, role, creation time.", "", "Options:", "  --company COMPANY_ID   the company", '  --json                 print one JSON object on stdout: {"company_id", "users": [...]}'].join("\n"),
    options: { company: { type: "string" }, ...json },
    positionals: [],
    required: ["company"],
    run: async (api, values, _positionals, io) => {
      const users = await api.listUsers(String(values.company));
      io.stdout(values.json ? output.asJson({ company_id: String(values.company), users }) : output.userTable(users));
    },
  },
  {
    group: "users",
    name: "reset-password",
    args: "USER_ID [--json]",
    summary: "Give a user a new generated password (shown once) and sign them out",
    help: ["Sets a new generated password for the user, prints it once and ends the user's console sessions.", "", "Options:", JSON_HELP + ': {"id","email","role","company_id","password"}'].join("\n"),
    options: { ...json },
    positionals: ["USER_ID"],
    run: async (api, values, [userId], io) => {
      const user = await api.resetPassword(userId!);
      io.stdout(values.json ? output.asJson(user) : output.userPasswordText(user, "reset"));
    },
  },
  {
    group: "users",
    name: "reset-2fa",
    args: "USER_ID [--json]",
    summary: "Reset a user's two-factor sign-in and sign them out",
    help: [
      "Turns off the user's two-factor sign-in (forgets the authenticator secret and the recovery codes) and ends the",
      "user's console sessions; for a user who lost both. They set it up again (at once when the company requires it).",
      "",
      "Options:",
      JSON_HELP + ': {"id","email","company_id"}',
    ].join("\n"),
    options: { ...json },
    positionals: ["USER_ID"],
    run: async (api, values, [userId], io) => {
      const user = await api.resetTwoFactor(userId!);
      io.stdout(values.json ? output.asJson(user) : `Reset two-factor sign-in of ${user.email} (id ${user.id}); their sessions ended.\n`);
    },
  },
  {
    group: "users",
    name: "remove",
    args: "USER_ID [--json]",
    summary: "Remove a console user (not the company's last owner)",
    help: ["Removes the user and ends their sessions. The company's last owner cannot be removed.", "", "Options:", JSON_HELP + " (the removed user)"].join("\n"),
    options: { ...json },
    positionals: ["USER_ID"],
    run: async (api, values, [userId], io) => {
      const user = await api.removeUser(userId!);
      io.stdout(values.json ? output.asJson(user) : `Removed user ${user.email} (id ${user.id}).\n`);
    },
  },
  {
    group: "pipelines",
    name: "import",
    args: "--company COMPANY_ID --file BLUEPRINT.json [--json]",
    summary: "Create a pipeline from a JSON file",
    help: [
      "Creates a pipeline with its stages, statuses, custom fields and duplicate detection from a JSON file:",
      "",
      '  { "name": "Sales", "short_id_prefix": "SALES",',
      '    "stages": [{ "name": "Lead", "statuses": ["Open", "Won", "Lost"] }, { "name": "Closed" }],',
      '    "custom_fields": [{ "key": "email", "label": "Email", "type": "email" }],',
      '    "duplicate_detection": { "fields": ["email"], "match": "any" } }',
      "",
      "Stages are in order; statuses default to Open, Won, Lost; short_id_prefix defaults to the name's letters",
      "upper-cased (at most 10). Custom field types: text, email, number, boolean, date, datetime, url, phone, select.",
      "",
      "Options:",
      "  --company COMPANY_ID   the company the pipeline belongs to",
      "  --file BLUEPRINT.json  the pipeline file",
      JSON_HELP + " (the pipeline with its stages and statuses)",
    ].join("\n"),
    options: { company: { type: "string" }, file: { type: "string" }, ...json },
    positionals: [],
    required: ["company", "file"],
    load: (values, io) => readJsonFile(String(values.file), io),
    run: async (api, values, _positionals, io, file) => {
      const pipeline = await api.importPipeline(String(values.company), file);
      io.stdout(values.json ? output.asJson(pipeline) : output.pipelineText(pipeline));
    },
  },
  ...(["archive", "restore"] as const).map(
    (action): Command => ({
      group: "pipelines",
      name: action,
      args: "PIPELINE_ID [--json]",
      summary: action === "archive" ? "Archive a pipeline (not listed, no new items)" : "Restore an archived pipeline",
      help: [
        action === "archive"
          ? "Archives the pipeline: GET /v1/ext/pipelines and Zapier's dropdowns no longer list it, and creating an item in it\nis 422 pipeline_archived. Its stages, statuses, fields and items stay readable, and its items updatable."
          : "Restores an archived pipeline: it is listed again and items can be created in it.",
        "Recorded in the company's audit log.",
        "",
        "Options:",
        JSON_HELP + " (the pipeline's id, name, company_id and archived_at)",
      ].join("\n"),
      options: { ...json },
      positionals: ["PIPELINE_ID"],
      run: async (api, values, [pipelineId], io) => {
        const state = action === "archive" ? await api.archivePipeline(pipelineId!) : await api.restorePipeline(pipelineId!);
        const text = state.archived_at ? `Pipeline ${state.name} (id ${state.id}) is archived since ${state.archived_at}.\n` : `Pipeline ${state.name} (id ${state.id}) is active.\n`;
        io.stdout(values.json ? output.asJson(state) : text);
      },
    }),
  ),
];

const GROUPS = [...new Set(COMMANDS.map((c) => c.group))];

/** The overall help. */
export function mainHelp(): string {
  const lines = COMMANDS.map((c) => `  ${c.group} ${c.name} ${c.args}\n      ${c.summary}`);
  return [
    `Usage: ${PROGRAM} <command> [options]`,
    "",
    "Commands:",
    ...lines,
    "",
    `Run "${PROGRAM} <command> --help" for the details of a command.`,
    "",
    "While a server runs on the embedded database in DATA_DIR (default ./data), commands go through it; otherwise",
    "the CLI opens the database itself (DATABASE_URL for PostgreSQL, as for npm start). Run it with the server's",
    "DATA_DIR / DATABASE_URL: every command prints on stderr which database it used. It refuses (exit 1, nothing",
    "created) where there is no Stageline database yet, unless given:",
    "  --init                 create a new database there (any command)",
    "Exit codes: 0 success, 1 error, 2 usage error.",
    "",
  ].join("\n");
}

function groupHelp(group: string): string {
  const lines = COMMANDS.filter((c) => c.group === group).map((c) => `  ${c.group} ${c.name} ${c.args}\n      ${c.summary}`);
  return [`Usage: ${PROGRAM} ${group} <command> [options]`, "", "Commands:", ...lines, ""].join("\n");
}

function usageOf(command: Command): string {
  return `Usage: ${PROGRAM} ${command.group} ${command.name} ${command.args}`;
}

function commandHelp(command: Command): string {
  return `${usageOf(command)}\n\n${command.help}\n`;
}

function isHelp(arg: string | undefined): boolean {
  return arg === "--help" || arg === "-h" || arg === "help";
}

/** Parses `argv` into a command and its values. @throws UsageError. @returns null when help was printed. */
function parseCommand(argv: string[], io: CliIo): { command: Command; values: Values; positionals: string[] } | null {
  const [group, name] = argv;
  if (group === undefined) throw new UsageError("No command given.", mainHelp());
  if (isHelp(group)) {
    io.stdout(mainHelp());
    return null;
  }
  if (!GROUPS.includes(group)) throw new UsageError(`Unknown command "${group}".`, mainHelp());
  if (isHelp(name)) {
    io.stdout(groupHelp(group));
    return null;
  }
  if (name === undefined) throw new UsageError(`"${group}" needs a command.`, groupHelp(group));
  const command = COMMANDS.find((c) => c.group === group && c.name === name);
  if (!command) throw new UsageError(`Unknown command "${group} ${name}".`, groupHelp(group));

  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv.slice(2),
      options: { ...command.options, ...GLOBAL_OPTIONS, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    }) as { values: Values; positionals: string[] };
  } catch (err) {
    throw new UsageError((err as Error).message, usageOf(command));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(commandHelp(command));
    return null;
  }
  if (positionals.length < command.positionals.length) {
    throw new UsageError(`Missing ${command.positionals.slice(positionals.length).join(", ")}.`, usageOf(command));
  }
  if (positionals.length > command.positionals.length) {
    const extra = positionals.slice(command.positionals.length).map((p) => JSON.stringify(p)).join(", ");
    throw new UsageError(`Unexpected argument ${extra}.`, usageOf(command));
  }
  for (const option of command.required ?? []) {
    if (values[option] === undefined) throw new UsageError(`Missing --${option}.`, usageOf(command));
  }
  if (command.options.active && (values.active === true) === (values.inactive === true)) {
    throw new UsageError("Give exactly one of --active and --inactive.", usageOf(command));
  }
  return { command, values, positionals };
}

/** Reads and parses a JSON file given on the command line (relative to where `npm run` was started). */
function readJsonFile(file: string, io: CliIo): unknown {
  const full = path.resolve(io.env.INIT_CWD ?? io.cwd, file);
  let text: string;
  try {
    text = fs.readFileSync(full, "utf8");
  } catch (err) {
    throw new CliError(`Cannot read ${full}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message}.`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError(`${full} is not valid JSON: ${(err as Error).message}.`);
  }
}

/**
 * Runs one CLI invocation.
 * @returns the exit code: 0 success, 1 error, 2 usage error.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parseCommand>;
  try {
    parsed = parseCommand(argv, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`Error: ${err.message}\n\n${err.usage.trimEnd()}\n`);
      return 2;
    }
    throw err;
  }
  if (!parsed) return 0;

  const { command, values, positionals } = parsed;
  let connection: AdminConnection | undefined;
  try {
    const loaded = command.load?.(values, io);
    connection = await connectAdmin(io.env, { init: values.init === true });
    // Which database, and whether through a running server: on stderr, so that --json output stays one object.
    io.stderr(`Database: ${connection.description}.\n`);
    await command.run(connection.api, values, positionals, io, loaded);
    return 0;
  } catch (err) {
    io.stderr(output.errorText(err, connection));
    return 1;
  } finally {
    await connection?.close().catch((err: unknown) => io.stderr(`Warning: closing the database failed: ${(err as Error).message}\n`));
  }
}

if (require.main === module) {
  runCli(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
