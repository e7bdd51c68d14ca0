/**
 * True for `application/json`, alone or with `charset=utf-8` (CONTRACT §3); any other
 * type or parameter is refused, so a client never has its body read in a charset it
 * did not mean.
 */
export function isJsonMediaType(contentType: string | null): boolean {
  if (contentType === null) return false;
  if (contentType === "application/json") return true;
  const [type, ...params] = contentType.split(";");
  if ((type as string).trim().toLowerCase() !== "application/json") return false;
  return params.every((param) => {
    const [name, value = ""] = param.split("=");
    return (
      (name as string).trim().toLowerCase() === "charset" &&
      value.trim().replace(/^"(.*)"$/, "$1").toLowerCase() === "utf-8"
    );
  });
}
