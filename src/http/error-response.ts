import { ApiError } from "../errors/api-error.ts";
import { CLIENT_GONE_STATUS, ClientGoneError } from "../errors/client-gone.ts";
import type { Logger } from "../log/logger.ts";
import { StoreUnavailableError } from "../store/store.ts";
import { problemResponse } from "./problem.ts";
import { validationDetail } from "./validation-detail.ts";

/**
 * The one place where anything thrown while answering a request becomes a response.
 * `code` is the framework's name for its own errors: VALIDATION (the body's shape),
 * PARSE, NOT_FOUND; anything unknown is a bug and answers 500 without internals.
 */
export function errorResponse(thrown: unknown, code: string | number, logger: Logger): Response {
  // The framework wraps what the body parser throws: ours throws ApiErrors, and ClientGoneError for a body cut short.
  const cause = (thrown as Error | undefined)?.cause;
  const error = cause instanceof ApiError || cause instanceof ClientGoneError ? cause : thrown;
  if (error instanceof ApiError) return problemResponse(error);
  if (error instanceof StoreUnavailableError) return problemResponse(storeUnavailable());
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

/** How long a client is asked to wait when the state store cannot be reached. */
const STORE_RETRY_AFTER_SECONDS = 2;

/** Nothing was charged: the client may send the same request again. The cause stays in the logs. */
function storeUnavailable(): ApiError {
  return new ApiError(
    "store_unavailable",
    "the server cannot use its state store right now (it cannot reach it, or cannot write to it); nothing was charged, try again shortly",
    { retry_after: STORE_RETRY_AFTER_SECONDS },
    { "retry-after": String(STORE_RETRY_AFTER_SECONDS) },
  );
}
