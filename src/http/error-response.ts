import { ApiError } from "../errors/api-error.ts";
import { CLIENT_GONE_STATUS, ClientGoneError } from "../errors/client-gone.ts";
import type { Logger } from "../log/logger.ts";
import { sqlstateOf } from "../store/postgres-unavailable.ts";
import { isUnwritable, stateFileFault } from "../store/sqlite-faults.ts";
import { StoreTimeoutError, StoreUnavailableError } from "../store/store.ts";
import { problemResponse } from "./problem.ts";
import { validationDetail } from "./validation-detail.ts";

/**
 * The API a response answers for: the public API's requests are charged units; the admin
 * API's charge none, and its writes change keys, plans, tokens, corrections, webhooks.
 */
export type AnsweringApi = "public" | "admin";

/**
 * The one place where anything thrown while answering a request becomes a response, for
 * the public API and the admin API alike (`api`: what a 503 tells the client was not
 * done). `code` is the framework's name for its own errors: VALIDATION (the body's
 * shape), PARSE, NOT_FOUND; anything unknown is a bug and answers 500 without internals.
 */
export function errorResponse(thrown: unknown, code: string | number, logger: Logger, api: AnsweringApi = "public"): Response {
  // The framework wraps what the body parser throws: ours throws ApiErrors, and ClientGoneError for a body cut short.
  const cause = (thrown as Error | undefined)?.cause;
  const error = cause instanceof ApiError || cause instanceof ClientGoneError ? cause : thrown;
  if (error instanceof ApiError) return problemResponse(error);
  if (error instanceof StoreUnavailableError) {
    noteRefusal(error, logger);
    return problemResponse(storeUnavailable(api));
  }
  // A read of a SQLite state file that cannot be used (a damaged page: a charge that
  // meets one fails with StoreUnavailableError naming the file, see sqlite-faults.ts).
  if (isUnwritable(error)) {
    noteStateFileFault(error, logger);
    return problemResponse(storeUnavailable(api));
  }
  // Nobody will read it; the status is for the access log and the metrics.
  if (error instanceof ClientGoneError) return new Response(null, { status: CLIENT_GONE_STATUS });
  switch (code) {
    case "VALIDATION":
      return problemResponse(new ApiError("invalid_request", validationDetail(error)));
    case "PARSE":
      return problemResponse(new ApiError("invalid_json", "the request body is not valid JSON"));
    case "NOT_FOUND":
      return problemResponse(new ApiError("not_found", "there is no such route"));
  }
  logger.log("error", "unhandled error", { error: String(error), stack: (error as Error)?.stack });
  return problemResponse(new ApiError("internal_error", "the server failed to answer this request"));
}

/** How often the same refusal by the state database is logged again while it lasts. */
const REFUSAL_LOG_EVERY_MS = 60_000;
/** The most distinct refusals remembered per logger; past that they are forgotten, and logged again. */
const REFUSALS_KEPT = 100;
/** Per logger (one a thread): when each refusal, by its message, was last logged. */
const refusals = new WeakMap<Logger, Map<string, number>>();

/**
 * Logs a statement the state database refused (PostgreSQL's SQLSTATE as the cause's
 * `errno`: a privilege revoked, a table gone, a read-only database, see isUnavailable)
 * once, and again at most once a minute while it lasts, not once a request: such a
 * fault can leave the store's polls, which log their own failures, untouched (a REVOKE
 * UPDATE on one table). A database that cannot be reached at all and SQLite's faults
 * carry no such cause and are told elsewhere. A statement that ran out of its time
 * (StoreTimeoutError: a charge's own statement_timeout, 57014, or a lease's lock wait,
 * 55P03) may carry the database's error as its cause, but the database refused
 * nothing: only the requests that waited answer 503, the server stays ready, and no
 * refusal is logged. A genuine refusal never becomes a StoreTimeoutError
 * (chargeDeadlineError converts only a deadline or 57014).
 */
function noteRefusal(error: StoreUnavailableError, logger: Logger): void {
  if (error instanceof StoreTimeoutError) return;
  const sqlstate = sqlstateOf(error.cause);
  if (sqlstate === undefined || !firstInAWhile(logger, error.message)) return;
  logger.log("error", "the state database refused a statement; the requests that need it answer 503 store_unavailable until it is fixed", { error: error.message, sqlstate });
}

/** Logs a read the SQLite state file failed (see isUnwritable) as noteRefusal logs a refusal: once, then at most once a minute. */
function noteStateFileFault(error: unknown, logger: Logger): void {
  const fault = stateFileFault(null, error);
  if (!firstInAWhile(logger, fault)) return;
  logger.log("error", "the state file cannot be read; the requests that read it answer 503 store_unavailable until it is fixed", { error: fault });
}

/** Whether `message` was not logged on `logger` in the last REFUSAL_LOG_EVERY_MS; if so, it counts as logged now. */
function firstInAWhile(logger: Logger, message: string): boolean {
  let logged = refusals.get(logger);
  if (!logged) refusals.set(logger, (logged = new Map()));
  const now = performance.now();
  const last = logged.get(message);
  if (last !== undefined && now - last < REFUSAL_LOG_EVERY_MS) return false;
  if (logged.size >= REFUSALS_KEPT) logged.clear();
  logged.set(message, now);
  return true;
}

/** How long a client is asked to wait when the state store cannot be reached. */
const STORE_RETRY_AFTER_SECONDS = 2;

/**
 * Nothing was charged (public API) or changed (admin API: a change and its audit entry
 * are one transaction): the client may send the same request again. The cause stays in
 * the logs.
 */
function storeUnavailable(api: AnsweringApi): ApiError {
  return new ApiError(
    "store_unavailable",
    `the server cannot use its state store right now (it cannot reach it, or cannot write to it); nothing was ${api === "admin" ? "changed" : "charged"}, try again shortly`,
    { retry_after: STORE_RETRY_AFTER_SECONDS },
    { "retry-after": String(STORE_RETRY_AFTER_SECONDS) },
  );
}
