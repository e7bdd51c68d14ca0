/**
 * What the console's main script (console.ts) lends its feature modules (key controls,
 * the audit log, read-only tokens), so that they need nothing else from it: the admin
 * API with the signed-in token, the page's message line, and a reload of what it shows.
 */
import { byId, make, type Message } from "./dom.ts";

export { byId, make };
export interface ConsoleHooks {
  /** Calls the admin API; throws an error carrying the problem details on a refusal. */
  api<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** Reloads the keys, plans and usage. */
  refresh(): Promise<void>;
  /** Runs an action, showing a refusal beside `place` (see say) instead of throwing. */
  attempt(action: () => Promise<void>, place?: string): Promise<void>;
  /**
   * Shows a message beside the element whose data-place is `place` (a key's row is
   * `key:ID`, a form its own name), or at the top of the page when there is none.
   */
  say(text: Message, isError?: boolean, place?: string): void;
  /** Takes away the message beside `place`, if one is shown there (a success a later refusal makes out of date). */
  unsay(place: string): void;
  /** Shows a secret once (after a creation or a rotation), under its key's row once the keys are drawn again. */
  showSecret(issued: { readonly id: string; readonly key: string; readonly name: string; readonly plan: string }, title: string): void;
  /** Brings the secret just shown into view, its Copy button focused. */
  focusSecret(): void;
  /** The plans' names, as last loaded. */
  planNames(): readonly string[];
}

/** A refusal's problem details, as the admin API answers them. */
export interface ProblemLike {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
}

/** What went wrong, in words: a refusal's detail and code, or the error's message. */
export function describeError(error: unknown): string {
  const problem = (error as { problem?: ProblemLike }).problem;
  if (problem) return `${problem.detail} (${problem.code})`;
  return error instanceof Error ? error.message : String(error);
}
