/**
 * What the console's main script (console.ts) lends its feature modules (key controls,
 * the audit log, read-only tokens), so that they need nothing else from it: the admin
 * API with the signed-in token, the page's message line, and a reload of what it shows.
 */
import { byId, make } from "./dom.ts";

export { byId, make };
export interface ConsoleHooks {
  /** Calls the admin API; throws an error carrying the problem details on a refusal. */
  api<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** Reloads the keys, plans and usage. */
  refresh(): Promise<void>;
  /** Runs an action, showing a refusal instead of throwing. */
  attempt(action: () => Promise<void>): Promise<void>;
  /** Shows a message on the page. */
  say(text: string, isError?: boolean): void;
  /** Shows a secret once (after a creation or a rotation). */
  showSecret(issued: { readonly id: string; readonly key: string; readonly name: string; readonly plan: string }, title: string): void;
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
