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
