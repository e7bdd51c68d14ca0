#!/usr/bin/env bun
// Running from source: `bun src/main.ts …`. The compiled binary starts at main-binary.ts.
import { defaultDataPath } from "./config/paths.ts";
import { main } from "./cli/entry.ts";

await main({ dataPath: defaultDataPath(), selfCommand: [process.execPath, import.meta.path] });
