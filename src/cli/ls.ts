/** `bodylink ls`: the runtimes running on this machine for this user (one record each, discovery.ts). */
import type { Command } from "commander";
import { listRuntimes, type RuntimeRecord } from "./discovery.js";

/** "3s", "4m 05s", "2h 10m", "3d 4h". */
export function formatUptime(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** A table with a header row, columns as wide as their widest cell. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (r: readonly string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(w[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

function lsRow(r: RuntimeRecord, nowMs: number): string[] {
  const started = Date.parse(r.startedAt);
  const urls = [r.apiUrl, r.lolaPath ? `lola:${r.lolaPath}` : null, r.tnyUrl, r.fleetUrl ? `fleet:${r.fleetUrl}` : null].filter(Boolean).join(" ");
  return [r.name, r.body, r.transport, String(r.pid), Number.isNaN(started) ? "?" : formatUptime(nowMs - started), urls];
}

export function registerLs(program: Command): void {
  program
    .command("ls")
    .description("list the runtimes running on this machine: name, body, pid, uptime, where they serve")
    .option("--json", "print JSON (one record per runtime)")
    .action((o: { json?: boolean }) => {
      const all = listRuntimes();
      if (o.json) return console.log(JSON.stringify(all, null, 2));
      if (all.length === 0) return console.log("no runtime is running on this machine (start one with `bodylink serve`)");
      const now = Date.now();
      console.log(
        table(
          ["NAME", "BODY", "LINK", "PID", "UPTIME", "SERVES"],
          all.map((r) => lsRow(r, now)),
        ),
      );
    });
}
