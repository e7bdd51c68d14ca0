import { emitDataUpdated, emitDataUpdateFailed } from "../events/emit.ts";
import { redactSecrets } from "../importer/fetch/locations.ts";
import { openStore } from "../store/open-store.ts";
import { StateNotFoundError } from "../store/store.ts";
import type { CliContext } from "./command.ts";

/**
 * data.updated and data.update_failed (CONTRACT §16), from `data update`, which both an
 * operator and `serve --update-every` run (serve hands its --state to the child). The
 * event goes in the state's outbox; a running server delivers it. A state that does not
 * exist has no webhooks, and nothing is created for it; a state that cannot be reached
 * is a warning: the update's own outcome and exit code stand.
 */
export async function announceDataUpdate(
  statePath: string,
  context: CliContext,
  outcome: { ok: true; path: string; dataVersion: string; builtAt: string; changes: readonly string[] } | { ok: false; path: string; reason: string },
): Promise<void> {
  let store;
  try {
    store = await openStore(statePath, { create: false });
  } catch (error) {
    if (!(error instanceof StateNotFoundError)) warn(context, error);
    return;
  }
  try {
    const at = context.now();
    if (outcome.ok) await emitDataUpdated(store, { ...outcome, changes: outcome.changes.map(redactSecrets) }, at);
    else await emitDataUpdateFailed(store, { path: outcome.path, reason: redactSecrets(outcome.reason) }, at);
  } catch (error) {
    warn(context, error);
  } finally {
    await store.close();
  }
}

function warn(context: CliContext, error: unknown): void {
  context.io.err(`iplookup: warning: the data update's webhook event could not be recorded: ${redactSecrets((error as Error)?.message ?? String(error))}`);
}
