// The compiled binary's entry: the default data set is embedded in the executable.
// `serve` first runs itself again with its allocator setting (see allocator-setting.ts);
// signals are held before the rest of the program loads (see startup-signals.ts).
import embeddedData from "../data/iplookup-data.db" with { type: "file" };
import { runServeWithAllocatorSetting } from "./cli/allocator-setting.ts";
import { holdSignalsDuringStartup } from "./cli/startup-signals.ts";

runServeWithAllocatorSetting([process.execPath]);
holdSignalsDuringStartup(process.argv);
const { main } = await import("./cli/entry.ts");
// The worker threads' module is compiled in beside this one (see build/compile.ts), under
// the binary's virtual root, where a relative path finds it.
await main({ dataPath: embeddedData, selfCommand: [process.execPath], workerEntry: "./serve/worker-thread.ts" });
