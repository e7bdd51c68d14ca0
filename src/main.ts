#!/usr/bin/env bun
// Running from source: `bun src/main.ts …`. The compiled binary starts at main-binary.ts.
// `serve` first runs itself again with its allocator setting (see allocator-setting.ts);
// signals are held before the rest of the program loads (see startup-signals.ts).
import { runServeWithAllocatorSetting } from "./cli/allocator-setting.ts";
import { holdSignalsDuringStartup } from "./cli/startup-signals.ts";

runServeWithAllocatorSetting([process.execPath, ...process.execArgv, import.meta.path]);
holdSignalsDuringStartup(process.argv);
const [{ defaultDataPath }, { main }] = await Promise.all([import("./config/paths.ts"), import("./cli/entry.ts")]);
await main({ dataPath: defaultDataPath(), selfCommand: [process.execPath, import.meta.path] });
