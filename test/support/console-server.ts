import type { Browser, Page } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchChromium, openContext } from "./chromium.ts";
import { heavyTurn } from "./heavy-turn.ts";
import { cli, startServerProcess, type ServerProcess } from "./server-process.ts";

/**
 * What a test of the console in a real browser runs against: a real server with its
 * admin listener, on a state file of its own; a full admin token; and Debian's Chromium.
 */
export interface ConsoleServer {
  /** The SQLite state file the server runs on. */
  readonly state: string;
  readonly server: ServerProcess;
  /** The admin listener's URL, without its trailing slash. */
  readonly admin: string;
  /** A full admin token, made with `admin create`. */
  readonly token: string;
  readonly browser: Browser;
  /** Closes the browser, kills the server and removes the state. */
  close(): Promise<void>;
}

/** The CLI run on the console server's state file, before the server starts. */
export type StateCli = (args: string[]) => ReturnType<typeof cli>;

/**
 * Starts a console server. The browser and the server take about 1.2 GB, so it first
 * waits for a turn with the suite's other heavy files (see heavyTurn), which `close`
 * ends. What has started is stopped again if a later step fails.
 *
 * @param name names the state's temporary folder
 * @param serveArgs more arguments for `serve` (it gets `--state` and `--admin-port 0`)
 * @param prepare runs before the server starts: keys, more tokens
 */
export async function startConsoleServer(name: string, serveArgs: string[] = [], prepare: (run: StateCli) => void = () => {}): Promise<ConsoleServer> {
  const endTurn = await heavyTurn();
  const dir = mkdtempSync(join(tmpdir(), `iplookup-${name}-`));
  const state = join(dir, "state.db");
  let server: ServerProcess | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await server?.stop("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    endTurn();
  };
  try {
    const run: StateCli = (args) => cli(args, { IPLOOKUP_STATE: state });
    const token = (JSON.parse(run(["admin", "create", "--name", "console", "--json"]).stdout) as { token: string }).token;
    prepare(run);
    server = await startServerProcess(["--state", state, ...serveArgs, "--admin-port", "0"]);
    const admin = /"admin":"([^"]+)"/.exec(server.stderr())![1]!.replace(/\/$/, "");
    browser = await launchChromium();
    return { state, server, admin, token, browser, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * A page of its own (a new browser context) on the console, signed in with `token` from
 * `#token=`: resolves once the signed-in page shows. `errors` collects the page's
 * uncaught errors and its console's errors and warnings.
 */
export async function openSignedIn(browser: Browser, admin: string, token: string, viewport: { width: number; height: number }): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
  const context = await openContext(browser, { viewport });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") errors.push(`${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
  await page.goto(`${admin}/console#token=${token}`);
  await page.locator("#signed-in").waitFor({ state: "visible" });
  return { page, errors, close: () => context.close() };
}
