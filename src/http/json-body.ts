import { ApiError } from "../errors/api-error.ts";

/**
 * Reads a request body of at most `maxBytes` and parses it as JSON.
 *
 * A declared Content-Length over the limit was refused before this runs; a body sent
 * without one (chunked) is read as a stream and cut off as soon as it passes the limit,
 * so a client cannot make the server buffer more than the limit.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  const text = request.headers.has("content-length")
    ? await request.text()
    : await readCapped(request, maxBytes);
  if (text.length === 0) throw new ApiError("invalid_json", "the request body is empty; send a JSON object");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ApiError("invalid_json", `the request body is not valid JSON: ${(error as Error).message}`);
  }
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
