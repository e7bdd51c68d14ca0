import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfigText } from "../../src/config/config-file.ts";
import { explainServeConfig, readServeConfig, SERVE_SETTING_NAMES, type ServeConfig } from "../../src/config/serve-config.ts";
import { defaultDataPath } from "../../src/config/paths.ts";
import { SETTINGS } from "../../src/config/settings.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";
import { cli, startServerProcess } from "../support/server-process.ts";
import { configErrorOf as errorOf, configFiles } from "../support/config-files.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const configFile = configFiles(dir);

const cidrs = (config: ServeConfig) => config.trustProxy.map((cidr) => `${cidr.network.text}/${cidr.prefix}`).join(",");

/**
 * Every serve setting at each level: the TOML value the file gives, the text the
 * environment and the flag give, and how to read each one back out of the config.
 */
const LEVELS: Record<(typeof SERVE_SETTING_NAMES)[number], { file: string; env: string; flag: string; read: (config: ServeConfig) => unknown; expect: [unknown, unknown, unknown] }> = {
  host: { file: '"127.0.0.3"', env: "127.0.0.2", flag: "127.0.0.1", read: (c) => c.host, expect: ["127.0.0.3", "127.0.0.2", "127.0.0.1"] },
  port: { file: "9003", env: "9002", flag: "9001", read: (c) => c.port, expect: [9003, 9002, 9001] },
  state: { file: '"/srv/file.db"', env: "/srv/env.db", flag: "/srv/flag.db", read: (c) => c.statePath, expect: ["/srv/file.db", "/srv/env.db", "/srv/flag.db"] },
  data: { file: '"/srv/file-data.db"', env: "/srv/env-data.db", flag: "/srv/flag-data.db", read: (c) => c.dataPath, expect: ["/srv/file-data.db", "/srv/env-data.db", "/srv/flag-data.db"] },
  trustProxy: { file: '["10.0.0.0/8", "::1"]', env: "10.1.0.0/16", flag: "10.2.0.0/16", read: cidrs, expect: ["10.0.0.0/8,::1/128", "10.1.0.0/16", "10.2.0.0/16"] },
  maxBody: { file: '"1MiB"', env: "2048", flag: "1k", read: (c) => c.maxBody, expect: [1024 * 1024, 2048, 1024] },
  logLevel: { file: '"warn"', env: "error", flag: "silent", read: (c) => c.logLevel, expect: ["warn", "error", "silent"] },
  workers: { file: "3", env: "2", flag: "1", read: (c) => c.workers, expect: [3, 2, 1] },
  adminHost: { file: '"::1"', env: "127.0.0.9", flag: "127.0.0.8", read: (c) => c.adminHost, expect: ["::1", "127.0.0.9", "127.0.0.8"] },
  adminPort: { file: '"off"', env: "9102", flag: "9101", read: (c) => c.adminPort, expect: [null, 9102, 9101] },
  tlsCert: { file: '"/etc/f.pem"', env: "/etc/e.pem", flag: "/etc/g.pem", read: (c) => c.tls?.certPath, expect: ["/etc/f.pem", "/etc/e.pem", "/etc/g.pem"] },
  tlsKey: { file: '"/etc/f.key"', env: "/etc/e.key", flag: "/etc/g.key", read: (c) => c.tls?.keyPath, expect: ["/etc/f.key", "/etc/e.key", "/etc/g.key"] },
  updateEvery: { file: '"6h"', env: "30m", flag: "1h30m", read: (c) => c.updateEvery, expect: [6 * 3_600_000, 30 * 60_000, 90 * 60_000] },
  downloadTimeout: { file: '"2h"', env: "45m", flag: "10m", read: (c) => c.downloadTimeout, expect: [2 * 3_600_000, 45 * 60_000, 10 * 60_000] },
  maxExpanded: { file: '"1GiB"', env: "512MiB", flag: "1048576", read: (c) => c.maxExpanded, expect: [1024 ** 3, 512 * 1024 ** 2, 1024 ** 2] },
};

describe("precedence: flag, then environment, then file, then default", () => {
  const names = SERVE_SETTING_NAMES;
  // The TLS pair goes together: with one of them missing at a level, the other level's is used.
  const fileText = names.map((name) => `${SETTINGS[name].flag} = ${LEVELS[name].file}`).join("\n");
  const path = configFile(`# every serve setting\n${fileText}\n`);
  const envOf = (only?: string) =>
    Object.fromEntries(names.filter((name) => only === undefined || name === only).map((name) => [SETTINGS[name].env, LEVELS[name].env]));

  test.each(names.map((name) => [name]))("%s: the file's value wins over the default, the environment's over the file's, the flag's over both", (name) => {
    const level = LEVELS[name];
    const flag = SETTINGS[name].flag;
    const defaults = explainServeConfig({}, {});
    const fromFile = explainServeConfig({ config: path }, {});
    expect(level.read(fromFile.config)).toEqual(level.expect[0]);
    expect(fromFile.sources[name]).toEqual({ kind: "file", path, line: names.indexOf(name) + 2 });
    expect(level.read(fromFile.config)).not.toEqual(level.read(defaults.config));
    const fromEnv = explainServeConfig({ config: path }, envOf(name));
    expect(level.read(fromEnv.config)).toEqual(level.expect[1]);
    expect(fromEnv.sources[name]).toEqual({ kind: "environment", name: SETTINGS[name].env });
    const fromFlag = explainServeConfig({ config: path, [flag]: level.flag }, envOf(name));
    expect(level.read(fromFlag.config)).toEqual(level.expect[2]);
    expect(fromFlag.sources[name]).toEqual({ kind: "flag", name: `--${flag}` });
    // The other settings keep the file's values.
    for (const other of names.filter((candidate) => candidate !== name && candidate !== "tlsCert" && candidate !== "tlsKey")) {
      expect(LEVELS[other].read(fromFlag.config)).toEqual(LEVELS[other].expect[0]);
    }
  });

  test("without a file, every setting is its default, and says so", () => {
    const { file, sources } = explainServeConfig({}, {});
    expect(file).toBeNull();
    for (const name of names) expect(sources[name]).toEqual({ kind: "default" });
  });

  test("IPLOOKUP_CONFIG names the file; --config wins over it", () => {
    const other = configFile("port = 7000\n");
    expect(readServeConfig({}, { IPLOOKUP_CONFIG: path }).port).toBe(9003);
    expect(readServeConfig({ config: other }, { IPLOOKUP_CONFIG: path }).port).toBe(7000);
    expect(readServeConfig({}, { IPLOOKUP_CONFIG: "" }).port).toBe(8080);
  });

  test("a TLS pair split across levels is read as one pair", () => {
    const certOnly = configFile('tls-cert = "/etc/c.pem"\n');
    expect(readServeConfig({ config: certOnly }, { IPLOOKUP_TLS_KEY: "/etc/k.pem" }).tls).toEqual({ certPath: "/etc/c.pem", keyPath: "/etc/k.pem", givenAs: "--tls-cert/IPLOOKUP_TLS_KEY" });
    expect(errorOf(() => readServeConfig({ config: certOnly }, {}))).toMatch(/tls-cert and --tls-key go together.*configuration file/);
  });

  test("one of the TLS pair alone in the file is refused with its line, as config check names the lines of what serve refuses", () => {
    const keyOnly = configFile('port = 9000\ntls-key = "/etc/k.pem"\n');
    expect(errorOf(() => readServeConfig({ config: keyOnly }, {}))).toEndWith(`go together: give both (or IPLOOKUP_TLS_CERT and IPLOOKUP_TLS_KEY, or tls-cert and tls-key in the configuration file) (tls-key at ${keyOnly}:2)`);
    // Given by a flag: no file line to name.
    expect(errorOf(() => readServeConfig({ "tls-cert": "/etc/c.pem" }, {}))).toEndWith("in the configuration file)");
  });

  test("an empty file, and one of comments only, change nothing", () => {
    for (const text of ["", "# nothing\n\n   # at all\n"]) expect(readServeConfig({ config: configFile(text) }, {})).toEqual(readServeConfig({}, {}));
  });
});

describe("a bad file is a ConfigError naming the file and the line at fault", () => {
  test.each([
    ["a syntax error", "port = 8080\nhost = \n", ":2: not valid TOML"],
    ["a key given twice", "port = 1\n\nport = 2\n", ":3: not valid TOML: Cannot redefine key 'port'"],
    ["two values on a line", "# c\nport = 1 2\n", ":2: not valid TOML"],
    ["an unknown setting", "port = 8080\n\n  colour = \"red\"\n", ':3: unknown setting "colour"'],
    ["a setting spelt as its variable", "IPLOOKUP_PORT = 1\n", ':1: unknown setting "IPLOOKUP_PORT"'],
    ["a table", "port = 1\n[serve]\nhost = \"::\"\n", ':2: unknown setting "serve" (the file has no tables'],
    ["a bad port", "# the port\nport = 70000\n", ":2: port: 70000 is not a port"],
    ["a port as bad text", "port = \"http\"\n", ':1: port: "http" is not a whole number'],
    ["a boolean", "host = \"::\"\nworkers = true\n", ":2: workers: true is not a value"],
    ["a float", "max-body = 1.5\n", ":1: max-body: 1.5 is not a value"],
    // TOML reads 8080.0 and 8e3 as the numbers 8080 and 8000: the text on the line tells.
    ["a whole float", "\nport = 8080.0\n", ":2: port: 8080.0 is written as a decimal number (with a point or an exponent); write the whole number, 8080"],
    ["a whole float with an exponent", "workers = 2e0 # two\n", ":1: workers: 2e0 is written as a decimal number (with a point or an exponent); write the whole number, 2"],
    ["a decimal on a line that ends in CR LF", "port = 8080.0 # the API\r\nworkers = 2\r\n", ":1: port: 8080.0 is written as a decimal number (with a point or an exponent); write the whole number, 8080"],
    ["a list for a setting of one value", "state = [\"/tmp/a\", \"b\"]\n", ":1: state: an array, but state takes one value (only trust-proxy takes a list)"],
    ["a list of one port", "port = [\"8080\"]\n", ":1: port: an array, but port takes one value"],
    ["a list of one number", "port = [8080]\n", ":1: port: an array, but port takes one value"],
    ["zero workers", "workers = 0\n", ":1: workers: must be at least 1"],
    ["a bad CIDR in a list", "trust-proxy = [\"10.0.0.0/8\", \"10.0.0.0/33\"]\n", ':1: trust-proxy: "10.0.0.0/33" is not an address'],
    ["a list of numbers", "trust-proxy = [1]\n", ":1: trust-proxy: an array of other than strings"],
    ["a bad log level", "log-level = \"loud\"\n", ':1: log-level: "loud" is not one of'],
    ["a bad duration", "\n\nupdate-every = \"daily\"\n", ':3: update-every: "daily" is not a duration'],
    ["an empty path", "state = \"\"\n", ":1: state: must not be empty"],
  ])("%s", (_, text, message) => {
    const path = configFile(text);
    expect(errorOf(() => readServeConfig({ config: path }, {}))).toContain(`${path}${message}`);
  });

  test("whole numbers written as TOML allows are taken: +8080, 8_080, 0x1F90, with a comment after", () => {
    for (const text of ["port = +8080\n", "port = 8_080\n", "port = 0x1F90\n", "port = 8080 # the port\n"]) {
      expect(readServeConfig({ config: configFile(text) }, {}).port).toBe(8080);
    }
  });

  test("a key's line is the one the parser reads it on: never a line inside a multi-line string, and a quoted key written with escapes", () => {
    const quoted = configFile('"\\u0070ort" = 8080\n');
    expect(readServeConfig({ config: quoted }, {}).port).toBe(8080);
    expect(parseConfigText('"\\u0070ort" = 8080\n', quoted, ["port"]).values.get("port")).toEqual({ text: "8080", line: 1 });
    expect(errorOf(() => readServeConfig({ config: configFile('\n"\\u0070ort" = 8080.0\n') }, {}))).toContain(":2: port: 8080.0 is written as a decimal number");
    const inString = 'state = """\nport = 1.5\n"""\nport = 9000\n';
    expect(readServeConfig({ config: configFile(inString) }, {}).port).toBe(9000);
    expect(parseConfigText(inString, "/etc/x.toml", ["port", "state"]).values.get("port")).toEqual({ text: "9000", line: 4 });
    // A whole number in the string above a decimal one is not taken for the key's.
    const decimal = configFile('state = """\nport = 8080\n"""\nport = 9000.0\n');
    expect(errorOf(() => readServeConfig({ config: decimal }, {}))).toContain(`${decimal}:4: port: 9000.0 is written as a decimal number`);
    // A list over several lines is on the line it starts on.
    expect(parseConfigText('port = 1\n\ntrust-proxy = [\n  "10.0.0.1",\n]\nworkers = 2\n', "/etc/x.toml", ["port", "trustProxy", "workers"]).values).toEqual(
      new Map([["port", { text: "1", line: 1 }], ["trust-proxy", { text: "10.0.0.1", line: 3 }], ["workers", { text: "2", line: 6 }]]),
    );
  });

  test("a key past the parser's search of the first 5,000 lines is found by its text, and a whole number there is taken", () => {
    const comments = "# a comment\n".repeat(5000);
    expect(parseConfigText(`${comments}port = 42410\n`, "/etc/x.toml", ["port"]).values.get("port")).toEqual({ text: "42410", line: 5001 });
    expect(errorOf(() => parseConfigText(`${comments}port = 42410\nworkers = 2.0\n`, "/etc/x.toml", ["port", "workers"]))).toContain("/etc/x.toml:5002: workers: 2.0 is written as a decimal number");
    // A key found on no line at all is not judged a decimal for want of its text.
    expect(parseConfigText(`${"# c\n".repeat(5000)}"\\u0070ort" = 8080\n`, "/etc/x.toml", ["port"]).values.get("port")).toEqual({ text: "8080", line: 0 });
  });

  test("a file written on Windows (CR LF) reads as the same file: a comment after a number, a tab before it", () => {
    for (const text of ["port = 8080 # the API\r\nworkers = 2\r\n", "port = 8080\t# the API\r\n", "\r\nport = 8_080 #\r\n"]) {
      const config = readServeConfig({ config: configFile(text) }, {});
      expect(config.port).toBe(8080);
    }
    expect(readServeConfig({ config: configFile("port = 8080 # the API\r\nworkers = 2\r\n") }, {}).workers).toBe(2);
  });

  test("a key the command does not read is refused, not ignored", () => {
    expect(errorOf(() => parseConfigText('port = 1\nhost = "::"\n', "/etc/x.toml", ["port"]))).toBe('/etc/x.toml:2: unknown setting "host"; the settings are port');
    expect(parseConfigText("port = 1\n", "/etc/x.toml", ["port"]).values.get("port")).toEqual({ text: "1", line: 1 });
  });

  test("a file that cannot be read names the file and why", () => {
    expect(errorOf(() => readServeConfig({ config: join(dir, "missing.toml") }, {}))).toBe(`--config: cannot read ${join(dir, "missing.toml")}: no such file`);
    expect(errorOf(() => readServeConfig({}, { IPLOOKUP_CONFIG: dir }))).toBe(`IPLOOKUP_CONFIG: cannot read ${dir}: a folder, not a file`);
    expect(errorOf(() => readServeConfig({ config: " " }, {}))).toBe("--config: must not be empty");
  });

  test("a file that is not UTF-8 is not valid TOML, named with the line of the bad bytes; none is replaced", () => {
    const path = join(dir, "latin1.toml");
    writeFileSync(path, Buffer.concat([Buffer.from('port = 8080\n# caf\xc3\xa9\nstate = "/tmp/st', "latin1"), Buffer.from([0xff]), Buffer.from('ate.db"\n')]));
    expect(errorOf(() => readServeConfig({ config: path }, {}))).toBe(`${path}:3: not valid TOML: bytes that are not UTF-8 (a TOML file is UTF-8 text)`);
    const result = cli(["config", "check", "--config", path]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${path}:3: not valid TOML`);
  });

  test("a bad value in the file is refused even where a flag or variable overrides it: the file is valid or not", () => {
    const path = configFile("port = \"x\"\n");
    expect(errorOf(() => readServeConfig({ config: path, port: "1" }, {}))).toContain(`${path}:1: port`);
    expect(errorOf(() => readServeConfig({ config: path }, { IPLOOKUP_PORT: "1" }))).toContain(`${path}:1: port`);
  });
});

describe("iplookup config check", () => {
  test("prints each effective setting and where it came from, the password masked; exit 0", () => {
    const path = configFile('state = "postgres://iplookup:s3cret-pw@db.internal:5432/iplookup"\nport = 9000\ntrust-proxy = ["10.0.0.5"]\n');
    const result = cli(["config", "check", "--config", path, "--host", "127.0.0.1"], { IPLOOKUP_MAX_BODY: "64KiB" });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain("s3cret-pw");
    expect(result.stdout).toContain(`configuration file: ${path} (valid)`);
    const line = (name: string) => result.stdout.split("\n").find((row) => row.startsWith(`${name} `))?.replace(/\s+/g, " ");
    expect(line("state")).toBe(`state postgres://iplookup:***@db.internal:5432/iplookup file ${path}:1`);
    expect(line("port")).toBe(`port 9000 file ${path}:2`);
    expect(line("trust-proxy")).toBe(`trust-proxy 10.0.0.5/32 file ${path}:3`);
    expect(line("host")).toBe("host 127.0.0.1 flag --host");
    expect(line("max-body")).toBe("max-body 65536 environment IPLOOKUP_MAX_BODY");
    expect(line("log-level")).toBe("log-level info default");
  });

  test("--json: the same as data", () => {
    const path = configFile("admin-port = \"off\"\n");
    const result = cli(["config", "check", "--json"], { IPLOOKUP_CONFIG: path, IPLOOKUP_ADMIN_PORT: "" });
    expect(result.code).toBe(0);
    const parsed = JSON.parse(result.stdout);
    expect(parsed.file).toBe(path);
    expect(parsed.settings.admin_port).toEqual({ value: "off", source: `file ${path}:1` });
    expect(Object.keys(parsed.settings)).toEqual(SERVE_SETTING_NAMES.map((name) => SETTINGS[name].flag.replaceAll("-", "_")));
  });

  test("--json: every key, at every depth, is snake_case; a setting not set is null, never \"\"", () => {
    const result = cli(["config", "check", "--json", "--data", join(import.meta.dir, "..", "..", "data", "iplookup-data.db")], {
      IPLOOKUP_ADMIN_PORT: "",
      IPLOOKUP_TRUST_PROXY: "",
      IPLOOKUP_TLS_CERT: "",
      IPLOOKUP_TLS_KEY: "",
      IPLOOKUP_CONFIG: "",
    });
    expect(result.stderr).toBe("");
    const parsed = JSON.parse(result.stdout);
    const keys: string[] = [];
    const walk = (value: unknown): void => {
      expect(value).not.toBe("");
      if (value === null || typeof value !== "object") return;
      for (const [key, inner] of Object.entries(value)) {
        keys.push(key);
        walk(inner);
      }
    };
    walk(parsed);
    expect(keys).toContain("max_body");
    for (const key of keys) expect(key).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
    for (const name of ["trust_proxy", "tls_cert", "tls_key"]) expect(parsed.settings[name]).toEqual({ value: null, source: "default" });
  });

  test("--json: the data embedded in the binary is null with embedded true, never a value --data would take as a file's path; the table says embedded", async () => {
    // The compiled binary's default data path is Bun's internal one, which isEmbedded
    // tells by its ~BUN (or /$bunfs/) part: a real data file under such a folder stands
    // for it here, so that the check finds it as the binary finds its own.
    const root = join(dir, "B~BUN", "root");
    mkdirSync(root, { recursive: true });
    const embeddedPath = join(root, "iplookup-data.db");
    symlinkSync(defaultDataPath(), embeddedPath);
    const env = { HOME: dir };
    const json = await runCliInProcess(embeddedPath, ["config", "check", "--json"], env);
    expect(json).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(json.stdout).settings.data).toEqual({ value: null, source: "default", embedded: true });
    const table = await runCliInProcess(embeddedPath, ["config", "check"], env);
    expect(table.stdout.split("\n").find((row) => row.startsWith("data "))?.replace(/\s+/g, " ")).toBe("data embedded default");
    // A data file, the checkout's default or one named, is its path, as --data takes it.
    const checkout = await runCliInProcess(defaultDataPath(), ["config", "check", "--json"], env);
    expect(JSON.parse(checkout.stdout).settings.data).toEqual({ value: defaultDataPath(), source: "default", embedded: false });
    const named = await runCliInProcess(embeddedPath, ["config", "check", "--json"], { ...env, IPLOOKUP_DATA: defaultDataPath() });
    expect(JSON.parse(named.stdout).settings.data).toEqual({ value: defaultDataPath(), source: "environment IPLOOKUP_DATA", embedded: false });
  });

  test("a bad file: exit 2, the file and line named on stderr, nothing on stdout", () => {
    const path = configFile("port = 8080\nworkers = \"many\"\n");
    const result = cli(["config", "check", "--config", path]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(`iplookup: ${path}:2: workers: "many" is not a whole number\n`);
    const syntax = cli(["config", "check", "--config", configFile("port = = 1\n")]);
    expect(syntax.code).toBe(2);
    expect(syntax.stderr).toMatch(/:1: not valid TOML/);
  });
});

test("serve --config: a real server takes its settings from the file, and a flag still wins", async () => {
  const state = join(dir, "served-state.db");
  const path = configFile(`state = "${state}"\ntrust-proxy = ["10.9.0.0/16"]\nmax-body = "4KiB"\nport = 1\nlog-level = "info"\n`);
  const server = await startServerProcess(["--config", path]);
  try {
    const line = JSON.parse(server.stderr().split("\n").find((row) => row.includes("iplookup serving")) as string);
    expect(line.state).toBe(state);
    expect(line.trust_proxy).toEqual(["10.9.0.0/16"]);
    expect(line.max_body).toBe(4096);
    // --port 0 from startServerProcess wins over the file's port = 1.
    expect(new URL(server.url).port).not.toBe("1");
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  } finally {
    expect(await server.stop()).toBe(0);
  }
});

test("serve with a bad file exits 2 before it listens, naming the line", () => {
  const path = configFile("port = 8080\nhost = \n");
  const result = cli(["serve", "--config", path]);
  expect(result.code).toBe(2);
  expect(result.stderr).toContain(`${path}:2: not valid TOML`);
});
