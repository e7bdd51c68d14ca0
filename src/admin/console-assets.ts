/** The console's files by name. */
export type ConsoleAssetName = "page" | "script" | "style" | "icon";

const TYPES: Record<ConsoleAssetName, string> = {
  page: "text/html; charset=utf-8",
  script: "text/javascript; charset=utf-8",
  style: "text/css; charset=utf-8",
  icon: "image/svg+xml",
};

let files: Promise<typeof import("./console-bundle.ts")> | undefined;

/**
 * One of the console's files. They are loaded on the first request for one, not at
 * start-up: from source, loading bundles the script (a child `bun build`, some hundred
 * milliseconds) that a server never asked for the console need not pay; in the binary
 * they are strings already.
 */
export async function consoleAsset(name: ConsoleAssetName): Promise<{ body: string; type: string }> {
  const loaded = await (files ??= import("./console-bundle.ts"));
  const body = name === "page" ? loaded.PAGE : name === "script" ? loaded.SCRIPT : name === "style" ? loaded.STYLE : loaded.ICON;
  return { body, type: TYPES[name] };
}
