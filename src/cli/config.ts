/**
 * `serve --config FILE` and `bodylink config print` (docs/operations.md, "A config file").
 *
 * The file is YAML, the format robotics keeps its configuration in (ROS 2 parameter files,
 * ros2_control and MoveIt configs, launch files): it takes comments, which a robot's config needs
 * (why this port, why this board version), and JSON is valid YAML, so a `.json` file reads too.
 * Its keys are `serve`'s flags without the dashes (`api-port: 8781`; a `--no-x` flag is `x: false`),
 * so `--help` documents the file. Top-level keys apply to every robot; `robots:` holds one section
 * per robot, keyed by its name (`--name` chooses one when there are several). Flags override the
 * file, the file overrides the defaults.
 *
 * Secrets (`token`, `fleet-password`, `fleet-token`) are never written in the file: each is
 * `{ file: PATH }` (read, trimmed) or `{ env: NAME }`, and `config print` shows where it comes from,
 * never its value.
 *
 * Every problem (a YAML error, an unknown key, a wrong type, a value the flag refuses, an
 * unreadable secret) is one line with the key's path; then BL_ERR_CLI_CONFIG.
 */
import { readFileSync } from "node:fs";
import type { Command, Option } from "commander";
import { BodylinkError } from "../errors.js";

/** Keys whose values are secrets: from a file or the environment, never in the file, never printed. */
export const SECRET_KEYS: Readonly<Record<string, string>> = { token: "BODYLINK_TOKEN", "fleet-password": "BODYLINK_FLEET_PASSWORD", "fleet-token": "BODYLINK_FLEET_TOKEN" };

/** Flags a config file does not hold: the file itself, and the command's own. */
const NOT_IN_FILE = new Set(["config", "help", "version"]);

/** Where a secret came from (what `config print` shows instead of it). */
export type SecretSource = { file: string } | { env: string };

export interface LoadedConfig {
  readonly file: string;
  /** The robot section used (its key), or null for a file without `robots:`. */
  readonly robot: string | null;
  /** Commander attribute name → value, as the flag's parser returns it. */
  readonly values: ReadonlyMap<string, unknown>;
  /** Commander attribute name → where its secret came from. */
  readonly secrets: ReadonlyMap<string, SecretSource>;
}

/** One key a command's flags allow in the file. */
interface Key {
  readonly key: string;
  readonly option: Option;
}

/** The file's key for each flag of `cmd`: `--api-port` → `api-port`, `--no-lola` → `lola`. */
export function configKeys(cmd: Command): Map<string, Key> {
  const out = new Map<string, Key>();
  for (const option of cmd.options) {
    if (!option.long) continue;
    const key = option.negate ? option.long.slice("--no-".length) : option.long.slice(2);
    if (NOT_IN_FILE.has(key)) continue;
    out.set(key, { key, option });
  }
  return out;
}

/**
 * Read FILE for `cmd` (serve's flags), choosing the robot section `name` (or the only one).
 * Throws BL_ERR_CLI_CONFIG after writing each problem as one line to `problemSink` (stderr).
 */
export async function loadConfig(file: string, cmd: Command, name: string | undefined, problemSink: (line: string) => void = (l) => console.error(l)): Promise<LoadedConfig> {
  const problems: string[] = [];
  const fail = (): never => {
    for (const p of problems) problemSink(`bodylink: ${file}: ${p}`);
    throw new BodylinkError("BL_ERR_CLI_CONFIG", file, problems.length, problems.length === 1 ? "" : "s");
  };
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    problems.push(`cannot read it: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    return fail();
  }
  // Loaded here, not with the CLI: only a --config reads YAML.
  const { LineCounter, parseDocument } = await import("yaml");
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  for (const e of doc.errors) {
    const at = lines.linePos(e.pos[0]);
    problems.push(`line ${at.line}, column ${at.col}: ${e.message.split("\n")[0]}`);
  }
  if (problems.length) return fail();
  const root = doc.toJS() as unknown;
  if (root === null || root === undefined) return { file, robot: null, values: new Map(), secrets: new Map() };
  if (!isPlainObject(root)) {
    problems.push(`expected a map of serve's flags (key: value), got ${describe(root)}`);
    return fail();
  }
  const keys = configKeys(cmd);
  const values = new Map<string, unknown>();
  const secrets = new Map<string, SecretSource>();
  const { robots, ...common } = root;
  let robot: string | null = null;
  let section: Record<string, unknown> = {};
  if (robots !== undefined) {
    if (!isPlainObject(robots) || Object.keys(robots).length === 0) problems.push(`robots: expected a map of robot name to that robot's flags, got ${describe(robots)}`);
    else {
      const names = Object.keys(robots);
      if (name !== undefined && !names.includes(name)) problems.push(`robots: no robot named ${JSON.stringify(name)} (the file has ${names.join(", ")}); choose one with --name`);
      else if (name === undefined && names.length > 1) problems.push(`robots: the file has ${names.length} robots (${names.join(", ")}); choose one with --name`);
      else {
        robot = name ?? names[0]!;
        const s = robots[robot];
        if (s === null || s === undefined) section = {};
        else if (!isPlainObject(s)) problems.push(`robots.${robot}: expected a map of serve's flags, got ${describe(s)}`);
        else section = s;
      }
    }
  }
  // The common keys first, then the robot's own (which win).
  const apply = (where: string, obj: Record<string, unknown>) => {
    for (const [k, v] of Object.entries(obj)) {
      const path = `${where}${k}`;
      if (where !== "" && k === "name") {
        problems.push(`${path}: a robot's name is its key under robots:`);
        continue;
      }
      const entry = keys.get(k);
      if (!entry) {
        problems.push(`${path}: unknown key${suggest(k, keys)}`);
        continue;
      }
      const attr = entry.option.attributeName();
      if (k in SECRET_KEYS) {
        const got = readSecret(path, v, problems);
        if (got) {
          values.set(attr, got.value);
          secrets.set(attr, got.source);
        }
        continue;
      }
      const parsed = parseValue(path, entry, v, problems);
      if (parsed !== undefined) values.set(attr, parsed.value);
    }
  };
  apply("", common);
  if (robot !== null) {
    apply(`robots.${robot}.`, section);
    values.set("name", robot);
  }
  if (problems.length) return fail();
  return { file, robot, values, secrets };
}

function parseValue(path: string, { option }: Key, v: unknown, problems: string[]): { value: unknown } | undefined {
  const flag = option.negate ? option.long! : `${option.long}${option.required ? " <value>" : option.optional ? " [value]" : ""}`;
  const refuse = (what: string) => {
    problems.push(`${path}: ${what}`);
    return undefined;
  };
  const parse = (s: string, prev: unknown): unknown => {
    if (!option.parseArg) return s;
    try {
      return option.parseArg(s, prev);
    } catch (e) {
      throw new Error((e as { usage?: { what: string } }).usage?.what ?? (e as Error).message);
    }
  };
  // A flag without a value (`--usb`), or its negation (`--no-lola` is `lola: false`).
  if (!option.required && !option.optional) {
    if (typeof v !== "boolean") return refuse(`expected true or false (the flag ${flag}), got ${describe(v)}`);
    return { value: option.negate ? v : v ? true : undefined };
  }
  // `--fleet [url]`: true alone, or a value.
  if (option.optional && typeof v === "boolean") return v ? { value: true } : undefined;
  const scalar = (x: unknown): string | null => (typeof x === "string" ? x : typeof x === "number" && Number.isFinite(x) ? String(x) : null);
  try {
    if (option.variadic) {
      const items = Array.isArray(v) ? v : [v];
      let acc: unknown;
      for (const item of items) {
        const s = scalar(item);
        if (s === null) return refuse(`expected a list of values (the flag ${flag} …), got ${describe(item)} in it`);
        acc = option.parseArg ? parse(s, acc) : [...((acc as string[] | undefined) ?? []), s];
      }
      return { value: acc };
    }
    const s = scalar(v);
    if (s === null) return refuse(`expected one value (the flag ${flag}), got ${describe(v)}`);
    return { value: parse(s, undefined) };
  } catch (e) {
    return refuse((e as Error).message);
  }
}

function readSecret(path: string, v: unknown, problems: string[]): { value: string; source: SecretSource } | null {
  const env = SECRET_KEYS[path.split(".").pop()!];
  if (!isPlainObject(v) || Object.keys(v).length !== 1 || (typeof v.file !== "string" && typeof v.env !== "string")) {
    problems.push(`${path}: a secret is not written in the config file: give { file: PATH } (read and trimmed) or { env: NAME } (e.g. ${env})`);
    return null;
  }
  if (typeof v.file === "string") {
    try {
      const value = readFileSync(v.file, "utf8").trim();
      if (value === "") throw Object.assign(new Error("empty"), { code: "empty" });
      return { value, source: { file: v.file } };
    } catch (e) {
      problems.push(`${path}: cannot read the secret from ${v.file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      return null;
    }
  }
  const name = v.env as string;
  const value = process.env[name];
  if (!value) {
    problems.push(`${path}: the environment variable ${name} is not set`);
    return null;
  }
  return { value, source: { env: name } };
}

function suggest(k: string, keys: ReadonlyMap<string, Key>): string {
  const norm = k
    .toLowerCase()
    .replace(/[_.\s]/g, "-")
    .replace(/^-+/, "");
  if (keys.has(norm)) return ` (did you mean ${norm}?)`;
  const camel = k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  if (keys.has(camel)) return ` (did you mean ${camel}?)`;
  return " (`bodylink serve --help` lists the flags; a key is a flag without its dashes)";
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return "a list";
  if (isPlainObject(v)) return "a map";
  if (v === null) return "nothing (null)";
  return JSON.stringify(v);
}

/**
 * Merge a loaded config into `cmd`'s parsed options: every value the command line did not give
 * (source "cli") takes the file's (source "config").
 */
export function applyConfig(cmd: Command, config: LoadedConfig): void {
  for (const [attr, value] of config.values) {
    if (cmd.getOptionValueSource(attr) === "cli") continue;
    cmd.setOptionValueWithSource(attr, value, "config");
  }
}

/**
 * The effective configuration as YAML a config file can hold: every flag with a value, a comment
 * naming where it came from (`flag`, the file, `default`, the environment); secrets as their
 * source (`{ file: … }`, `{ env: … }`) or `(given on the command line, hidden)`, never the value.
 */
export function printConfig(cmd: Command, config: LoadedConfig | null): string[] {
  const out: string[] = [`# bodylink serve: the effective configuration (flags, then ${config ? config.file : "no --config file"}, then defaults)`];
  if (config?.robot) out.push(`# robot section: robots.${config.robot}`);
  const opts = cmd.opts() as Record<string, unknown>;
  for (const { key, option } of configKeys(cmd).values()) {
    const attr = option.attributeName();
    const source = cmd.getOptionValueSource(attr);
    const where = source === "cli" ? "flag" : source === "config" ? (config?.file ?? "config") : (source ?? "default");
    if (key in SECRET_KEYS) {
      const from = config?.secrets.get(attr);
      const envName = SECRET_KEYS[key]!;
      if (source === "cli") out.push(`${key}: "(given on the command line, hidden)"  # flag`);
      else if (from && "file" in from) out.push(`${key}: { file: ${JSON.stringify(from.file)} }  # ${where}`);
      else if (from && "env" in from) out.push(`${key}: { env: ${from.env} }  # ${where}`);
      else if (process.env[envName]) out.push(`${key}: { env: ${envName} }  # environment`);
      continue;
    }
    const v = opts[attr];
    if (v === undefined) continue;
    // JSON's strings, numbers, booleans and lists are YAML (flow style): the output reads back as a config file.
    out.push(`${key}: ${JSON.stringify(v)}  # ${where}`);
  }
  return out;
}

/**
 * `cmd`'s options with its `--config FILE` merged in (flags win), and the file as loaded (null
 * without --config). The robot section is the one `--name` names, or the file's only one.
 */
export async function optionsWithConfig(cmd: Command): Promise<{ opts: Record<string, unknown>; config: LoadedConfig | null }> {
  const o = cmd.opts() as { config?: string; name?: string };
  if (o.config === undefined) return { opts: cmd.opts(), config: null };
  const config = await loadConfig(o.config, cmd, cmd.getOptionValueSource("name") === "cli" ? o.name : undefined);
  applyConfig(cmd, config);
  return { opts: cmd.opts(), config };
}

/** `bodylink config print`: serve's flags and --config, and what they give. */
export function registerConfig(program: Command, addServeOptions: (cmd: Command) => Command): void {
  const config = program.command("config").description("the config file `serve --config FILE` reads (YAML; docs/operations.md)");
  addServeOptions(
    config
      .command("print")
      .description("print the effective configuration of `serve` with these flags and --config FILE: every value and where it comes from; secrets by their source, never their value"),
  )
    .option("--record <file>", "as serve's --record")
    .action(async (_raw: unknown, cmd: Command) => {
      const { config: loaded } = await optionsWithConfig(cmd);
      for (const l of printConfig(cmd, loaded)) console.log(l);
    });
}
