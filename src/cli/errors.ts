/** CLI failure: one clear line on stderr and a non-zero exit. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = "CliError";
  }
}

export function parseIntOption(name: string, min: number, max: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new CliError(`${name} must be an integer in ${min}..${max}, got ${JSON.stringify(v)}`, 2);
    return n;
  };
}

export function parseChoice<T extends string>(name: string, choices: readonly T[]) {
  return (v: string): T => {
    if (!(choices as readonly string[]).includes(v)) throw new CliError(`${name} must be one of ${choices.join(", ")}, got ${JSON.stringify(v)}`, 2);
    return v as T;
  };
}
