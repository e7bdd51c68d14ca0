import { ApiError } from "../errors/api-error.ts";

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** An ApiError as an RFC 9457 problem details response. */
export function problemResponse(error: ApiError): Response {
  const body = {
    type: "about:blank",
    title: TITLES[error.status] ?? "Error",
    status: error.status,
    code: error.code,
    detail: error.detail,
    ...error.extra,
  };
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: { "content-type": "application/problem+json", ...error.headers },
  });
}
