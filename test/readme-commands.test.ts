/**
 * The README's commands cannot drift from the CLI: every command `bodylink --help` lists (and
 * every subcommand) appears in the README as `bodylink <command>`, and every `npx bodylink …`
 * the README shows names a real command with flags its --help lists. Runs the installed entry.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { cli } from "./support/cli.js";

vi.setConfig({ testTimeout: 120_000 });
const env = { ...process.env, BODYLINK_RUNTIME_DIR: "/nonexistent-bodylink-readme-test" };
const readme = readFileSync("README.md", "utf8");

/** Commands listed under "Commands:" in a --help text (without commander's `help`). */
function commandsIn(help: string): string[] {
  const section = help.split(/^Commands:$/m)[1] ?? "";
  return [...section.matchAll(/^ {2}([a-z][\w-]*)/gm)].map((m) => m[1]!).filter((c) => c !== "help");
}

/** Long and short flags listed under "Options:" (a negatable `--no-x` is listed as such). */
function flagsIn(help: string): Set<string> {
  const section = (help.split(/^Options:$/m)[1] ?? "").split(/^Commands:$/m)[0]!;
  const flags = new Set<string>();
  for (const line of section.split("\n")) {
    const m = /^ {2}((?:-[\w-]+(?:, )?)+)/.exec(line);
    if (m) for (const f of m[1]!.split(", ")) flags.add(f.trim());
  }
  return flags;
}

/** Every command path (["serve"], ["chest", "version"], …) with its --help text. */
async function allCommands(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const visit = async (path: string[]) => {
    const r = await cli(env, ...path, "--help");
    expect(r.code, `${path.join(" ")} --help`).toBe(0);
    const subs = commandsIn(r.stdout);
    if (path.length > 0) out.set(path.join(" "), r.stdout);
    await Promise.all(subs.map((s) => visit([...path, s])));
  };
  await visit([]);
  return out;
}

/** `npx bodylink …` invocations in the README (code blocks and table cells), as word lists. */
function readmeInvocations(): string[][] {
  const found: string[][] = [];
  for (const m of readme.matchAll(/npx bodylink ([^`\n#|]*)/g)) found.push(m[1]!.trim().split(/\s+/).filter(Boolean));
  return found;
}

describe("the README's commands match the CLI's --help", () => {
  it("every command and subcommand is in the README, and every README invocation is a real command with real flags", async () => {
    const commands = await allCommands();
    expect(commands.size).toBeGreaterThan(5);
    for (const path of commands.keys()) {
      const parent = path.split(" ").slice(0, -1).join(" ");
      if (parent && commandsIn(commands.get(parent) ?? "").length === 0) continue;
      const isGroup = commandsIn(commands.get(path)!).length > 0;
      if (isGroup) continue; // its subcommands are checked
      expect(readme, `README does not mention \`bodylink ${path}\``).toContain(`bodylink ${path}`);
    }
    const invocations = readmeInvocations();
    expect(invocations.length).toBeGreaterThan(10);
    for (const words of invocations) {
      let path = "";
      let i = 0;
      while (i < words.length && commands.has(path ? `${path} ${words[i]}` : words[i]!)) path = path ? `${path} ${words[i++]}` : words[i++]!;
      expect(path, `README: npx bodylink ${words.join(" ")}`).not.toBe("");
      const flags = flagsIn(commands.get(path)!);
      for (const w of words.slice(i)) {
        const flag = /^\[?(-{1,2}[\w-]+)/.exec(w)?.[1];
        if (flag) expect(flags.has(flag), `README: \`npx bodylink ${words.join(" ")}\`: ${path} has no ${flag}`).toBe(true);
      }
    }
  });
});
