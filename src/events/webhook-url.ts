import { hasUnsafeCharacter } from "../access/plain-text.ts";

/**
 * What a webhook's URL may be (CONTRACT §16): `http://` or `https://`, to any address the
 * operator registers (a receiver on the same machine, a private address: the operator
 * is trusted with the admin API). No credentials in it (they would be shown wherever
 * webhooks are listed), no fragment (not even an empty `#`), no empty query (a `?` with
 * nothing after it), at most 2,000 characters: a URL that names its receiver one way
 * (see receiverOf in webhook-ids.ts). Null when acceptable, else the reason.
 *
 * A reason never quotes user info (`user:password@`), the URL's or what the text would
 * have had if it parsed: a refusal is shown by the admin API, the console and the CLI
 * alike, and must not be what shows a password.
 *
 * `as`: "new" for a URL being registered; "stored" for one a state already holds (a
 * snapshot being copied), which may hold C1 control characters or lone surrogates,
 * taken before the rule of plain-text.ts reached URLs, or name its host without `//`
 * (`http:x`, `http:///x`, which URL() reads as `http://x/`), taken before the host was
 * read from the text as written, or end with an empty `#` or `?`, taken before those
 * were refused: a state that could be written can always be copied.
 */
export const MAX_URL_LENGTH = 2000;

export function webhookUrlError(text: string, as: "new" | "stored" = "new"): string | null {
  if (text.length > MAX_URL_LENGTH) return `the URL is longer than ${MAX_URL_LENGTH} characters`;
  // Control characters and spaces: URL() would quietly drop or encode them.
  if (/[\u0000-\u0020\u007f]/.test(text) || (as === "new" && hasUnsafeCharacter(text))) return "the URL holds spaces or control characters";
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `"${withoutUserInfo(text)}" is not a URL`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    // The scheme is named only when `//` follows it: in `user:password@host` it is the user.
    return /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? `a webhook URL is http:// or https:// (got ${url.protocol}//)` : "a webhook URL is http:// or https://";
  }
  if (url.hostname === "") return "the URL names no host";
  if (url.username !== "" || url.password !== "") return NO_CREDENTIALS;
  if (as === "new") {
    // URL() forgives a missing or empty authority (`http:x`, `http:/x`, `http:///x` and
    // `http:\\x` all read as `http://x/`): the text itself must name the host after `//`.
    const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#\\]*)/i.exec(text)?.[1];
    if (authority === undefined || authority === "" || authority.startsWith(":")) return `the URL names no host: write it as ${url.protocol}//HOST/…`;
    // `http://@host/`: an empty user name, which URL() drops.
    if (authority.includes("@")) return NO_CREDENTIALS;
  }
  // A `#` with nothing after it leaves url.hash empty, yet marks a fragment all the same;
  // with no `#`, a `?` can only open the query (the host and path end at it).
  if (url.hash !== "" || (as === "new" && text.includes("#"))) return "a webhook URL has no #fragment";
  if (as === "new" && url.search === "" && text.includes("?")) return `the URL's query is empty: write it without the "?"`;
  return null;
}

const NO_CREDENTIALS = "put no credentials in a webhook URL; deliveries are signed (verify the webhook-signature header)";

/**
 * `text` with everything from the end of its scheme (and slashes) to its last `@` shown
 * as `***`: user info however the text is broken (`https://user:pw@[::1` →
 * `https://***@[::1`). A password may hold `/` or `@`, so the last `@` of all is taken:
 * too much hidden is harmless, too little is not.
 */
export function withoutUserInfo(text: string): string {
  const at = text.lastIndexOf("@");
  if (at < 0) return text;
  const start = /^(?:[a-z][a-z0-9+.-]*:[/\\]+|https?:)?/i.exec(text)![0].length;
  return `${text.slice(0, start)}***${text.slice(at)}`;
}

/** What a webhook URL is shown as when not even its origin can be read from it. */
const HIDDEN = "…";

/**
 * A webhook URL as it is shown to whoever may read webhooks but not manage them (a
 * read-only admin token, and so the console signed in with one) and as the audit log
 * records it: its origin (scheme, host, port), and "/…" in place of a path beyond "/"
 * or a query. Both may hold the receiver's secret (`?token=…`, a Slack-style
 * `/services/T0/B0/XXXX`), and no rule can tell a secret path from a harmless one, so
 * neither is shown. User info never reaches the origin (it is refused anyway). Text
 * that is no http(s) URL is hidden whole. Shown twice, a URL stays as it was shown
 * once ("/…" is a path beyond "/"), so stored entries can be shown again safely.
 */
export function shownWebhookUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return HIDDEN;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return HIDDEN;
  return url.pathname === "/" && url.search === "" ? url.origin : `${url.origin}/${HIDDEN}`;
}
