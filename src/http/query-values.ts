/**
 * Every value of a query parameter in a request URL, in order: a repeated parameter has
 * them all, where the framework's parsed query keeps one. Bad percent-encoding is read
 * as it is (URLSearchParams does not fail).
 */
export function queryValues(url: string, name: string): string[] {
  const at = url.indexOf("?");
  return at < 0 ? [] : new URLSearchParams(url.slice(at + 1)).getAll(name);
}
