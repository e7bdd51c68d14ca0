import pkg from "../package.json" with { type: "json" };

/** Set by `bun run build` (`--define`); absent when running from source. */
declare const IPLOOKUP_BUILD_DATE: string | undefined;

export const VERSION: string = pkg.version;
export const BUILD_DATE: string | null = typeof IPLOOKUP_BUILD_DATE === "string" ? IPLOOKUP_BUILD_DATE : null;
