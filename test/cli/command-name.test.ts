import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { commandName, howToRun } from "../../src/cli/command-name.ts";

const main = join(process.cwd(), "src", "main.ts");

describe("the command a hint names", () => {
  test("from a checkout: bun and the script, relative to the working directory when below it", () => {
    expect(commandName({ selfCommand: [process.execPath, main] })).toBe("bun src/main.ts");
    expect(howToRun({ selfCommand: [process.execPath, main] }, "keys create --name NAME")).toBe("bun src/main.ts keys create --name NAME");
  });

  test("from elsewhere: the script's absolute path, quoted when a shell would split it", () => {
    expect(commandName({ selfCommand: [process.execPath, "/opt/iplookup/src/main.ts"] })).toBe("bun /opt/iplookup/src/main.ts");
    expect(commandName({ selfCommand: [process.execPath, "/home/op/my checkout/src/main.ts"] })).toBe("bun '/home/op/my checkout/src/main.ts'");
    expect(commandName({ selfCommand: [process.execPath, "/home/op/it's/src/main.ts"] })).toBe("bun '/home/op/it'\\''s/src/main.ts'");
  });

  test("the compiled binary: iplookup", () => {
    expect(commandName({ selfCommand: ["/usr/local/bin/iplookup"] })).toBe("iplookup");
    expect(commandName({ selfCommand: ["/usr/local/bin/iplookup", "/$bunfs/root/iplookup"] })).toBe("iplookup");
    expect(howToRun({ selfCommand: ["/usr/local/bin/iplookup"] }, "keys list")).toBe("iplookup keys list");
  });
});
