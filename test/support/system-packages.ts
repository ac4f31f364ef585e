/**
 * The Debian packages some tests need, found the way a shell finds them: an override variable,
 * else PATH, else the sbin directories Debian installs daemons in (nats-server lives in /usr/sbin,
 * which only root's PATH has). A missing package skips its tests with ONE line naming it: the
 * global setup (test/support/report-skips.ts) prints it once per run in vitest's default output,
 * and the skipped describe carries it as its title.
 */
import { accessSync, constants, statSync } from "node:fs";
import { join } from "node:path";

export interface SystemPackage {
  /** The Debian package (apt-get install NAME). */
  readonly debian: string;
  /** The executable it installs. */
  readonly executable: string;
  /** Environment variable that names the executable instead. */
  readonly override: string;
  /** What skips without it. */
  readonly tests: string;
}

export const SYSTEM_PACKAGES = {
  chromium: { debian: "chromium", executable: "chromium", override: "BODYLINK_CHROMIUM", tests: "the browser tests (test/dashboard/)" },
  natsServer: { debian: "nats-server", executable: "nats-server", override: "BODYLINK_NATS_SERVER", tests: "the fleet tests (test/fleet/, the fleet page)" },
  systemd: { debian: "systemd", executable: "systemd-analyze", override: "BODYLINK_SYSTEMD_ANALYZE", tests: "systemd-analyze verify of the units (test/systemd.test.ts)" },
} as const satisfies Record<string, SystemPackage>;

export const SBIN_DIRS: readonly string[] = ["/usr/local/sbin", "/usr/sbin", "/sbin"];

function executable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The executable's path, or null when the package is not installed. */
export function locate(pkg: SystemPackage, env: NodeJS.ProcessEnv = process.env, extraDirs: readonly string[] = SBIN_DIRS): string | null {
  const named = env[pkg.override];
  if (named) return executable(named) ? named : null;
  const dirs = [...(env.PATH ?? "").split(":").filter((d) => d !== ""), ...extraDirs];
  for (const d of dirs) {
    const p = join(d, pkg.executable);
    if (executable(p)) return p;
  }
  return null;
}

/** The one line that says why the package's tests skip, or null when it is installed. */
export function skipLine(pkg: SystemPackage, env: NodeJS.ProcessEnv = process.env, extraDirs: readonly string[] = SBIN_DIRS): string | null {
  if (locate(pkg, env, extraDirs) !== null) return null;
  const named = env[pkg.override];
  const where = named ? `${pkg.override}=${named} is not an executable` : `Debian package ${pkg.debian} is not installed (apt-get install ${pkg.debian})`;
  return `SKIPPED ${pkg.tests}: ${where}`;
}
