import { ApiError } from "../errors/api-error.ts";

/**
 * Reads a request body of at most `maxBytes` and parses it as JSON.
 *
 * A declared Content-Length over the limit was refused before this runs; a body sent
 * without one (chunked) is read as a stream and cut off as soon as it passes the limit,
 * so a client cannot make the server buffer more than the limit.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  const declared = request.headers.get("content-length");
  let value: unknown;
  let size: number;
  if (declared !== null) {
    if (declared === "0") throw emptyBody();
    size = Number(declared);
    // Parsing straight from the body's bytes spares building a string first.
    try {
      value = await request.json();
    } catch (error) {
      throw notJson(error);
    }
  } else {
    const text = await readCapped(request, maxBytes);
    if (text.length === 0) throw emptyBody();
    size = text.length;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw notJson(error);
    }
  }
  // Every level of nesting takes two bytes ("[]" or "{}"): a shorter body cannot be too deep.
  if (size >= 2 * MAX_DEPTH && nestedDeeperThan(value, MAX_DEPTH)) {
    throw new ApiError("invalid_request", `the request body is nested deeper than ${MAX_DEPTH} levels`);
  }
  return value;
}

function emptyBody(): ApiError {
  return new ApiError("invalid_json", "the request body is empty; send a JSON object");
}

function notJson(error: unknown): ApiError {
  return new ApiError("invalid_json", `the request body is not valid JSON: ${(error as Error).message}`);
}

/**
 * No request body of the API is nested more than two levels; anything far deeper is
 * refused before schema validation, whose error reporting recurses into the value.
 */
const MAX_DEPTH = 32;

/** An iterative walk: a hostile body cannot exhaust the stack here either. */
function nestedDeeperThan(root: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[root, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== "object") continue;
    if (depth >= limit) return true;
    const children = Array.isArray(value) ? value : Object.values(value);
    for (const child of children) if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
  }
  return false;
}

async function readCapped(request: Request, maxBytes: number): Promise<string> {
  if (!request.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw bodyTooLarge(maxBytes);
    chunks.push(chunk);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

export function bodyTooLarge(maxBytes: number): ApiError {
  return new ApiError("payload_too_large", `the request body is larger than ${maxBytes} bytes`, { max_body_bytes: maxBytes });
}
