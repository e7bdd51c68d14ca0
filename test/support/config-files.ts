import { expect } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../../src/config/config-error.ts";

/** Writes configuration files into `dir`, a new name each: returns a function of the text that gives the file's path. */
export function configFiles(dir: string): (text: string) => string {
  let count = 0;
  return (text) => {
    const path = join(dir, `config-${++count}.toml`);
    writeFileSync(path, text);
    return path;
  };
}

/** What a ConfigError says, or "" when the call succeeds (any other error fails the test). */
export function configErrorOf(run: () => unknown): string {
  try {
    run();
    return "";
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
}
