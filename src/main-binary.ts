// The compiled binary's entry: the default data set is embedded in the executable.
import embeddedData from "../data/iplookup-data.db" with { type: "file" };
import { main } from "./cli/entry.ts";

await main({ dataPath: embeddedData, selfCommand: [process.execPath] });
