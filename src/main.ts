#!/usr/bin/env bun
// Running from source: `bun src/main.ts …`. The compiled binary starts at main-binary.ts.
// Signals are held before the rest of the program loads (see startup-signals.ts).
import { holdSignalsDuringStartup } from "./cli/startup-signals.ts";

holdSignalsDuringStartup(process.argv);
const [{ defaultDataPath }, { main }] = await Promise.all([import("./config/paths.ts"), import("./cli/entry.ts")]);
await main({ dataPath: defaultDataPath(), selfCommand: [process.execPath, import.meta.path] });
