/**
 * What every command's argument parsing shares. Parsers return the parsed arguments or a usage
 * message (a string); these helpers follow the same convention.
 */

/** `--name N`: an integer in `[min, max]`, `fallback` when absent, or the usage message. */
export function intArg<F extends number | undefined>(name: string, text: string | undefined, range: { min: number; max: number; fallback: F }): number | F | string {
  if (text === undefined) return range.fallback;
  if (!/^\d+$/.test(text) || Number(text) < range.min || Number(text) > range.max) {
    return `--${name} must be an integer from ${range.min} to ${range.max}`;
  }
  return Number(text);
}

/** The first usage message among parsed values, if any. */
export function firstProblem(values: ReadonlyArray<unknown>): string | undefined {
  return values.find((v): v is string => typeof v === 'string');
}

/**
 * A secret from its flag or, so it stays out of shell history and `ps`, its environment variable.
 * Never echoed in any message.
 */
export function secretArg(flagValue: string | undefined, env: NodeJS.ProcessEnv, envName: string): string | undefined {
  return flagValue ?? (env[envName] || undefined);
}

/** The usage message of a missing secret. */
export function missingSecret(flag: string, envName: string): string {
  return `${flag} (or the ${envName} environment variable) is required`;
}
