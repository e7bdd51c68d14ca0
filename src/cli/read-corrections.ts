import { existsSync } from "node:fs";
import { isFilePath } from "../config/paths.ts";
import { readSetting } from "../config/settings.ts";
import { CorrectionTable } from "../corrections/correction-table.ts";
import type { CliContext } from "./command.ts";
import { withStoreAt } from "./with-store.ts";

/**
 * The local corrections the offline answers (`iplookup lookup`, `iplookup asn`) apply as
 * a server does: those of the state named by --state or IPLOOKUP_STATE (which must
 * exist: a mistyped state is refused, creating nothing), or of the default state file
 * when it exists (a machine without one answers without corrections). Null when there
 * are none.
 */
export async function readCorrections(flags: Readonly<Record<string, unknown>>, context: CliContext): Promise<CorrectionTable | null> {
  const named = readSetting("state", flags, context.env, "");
  const location = named === "" ? readSetting("state", flags, context.env) : named;
  if (named === "" && isFilePath(location) && !existsSync(location)) return null;
  const corrections = await withStoreAt(location, { create: false, readOnly: true }, (store) => store.listCorrections());
  return corrections.length === 0 ? null : CorrectionTable.build(corrections);
}
