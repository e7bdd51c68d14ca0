import { redactUrl } from "../../store/redact-url.ts";

/**
 * Where a source comes from: a file path or an `http(s)://` URL. A URL may carry
 * credentials (`https://USER:PASSWORD@host/…`, or a secret in its query such as IPinfo's
 * `?token=`); they are used for the download and never shown, logged or stored:
 * messages show `redactSecrets(text)`, the data file's recipe `storedUrl(url)`.
 */

/** Whether a FILE argument names a download. */
export function isUrl(text: string): boolean {
  return /^https?:\/\//i.test(text);
}

/**
 * Query parameters that carry a secret: tokens, licence keys, passwords, and Azure's SAS
 * `sig`. A SAS URL's other parameters (`sv`, `se`, `sr`, `sp`, …) are not secret, and
 * a SAS may be valid for years, so its `sig` is stored without its value and put back
 * from IPLOOKUP_DOWNLOAD_AUTH as a token is (see restoredValue).
 */
const SECRET_NAMES = ["token", "access_token", "api_?key", "apikey", "key", "license_key", "licence_key", "password", "passwd", "pass", "secret", "auth", "sig"];
/**
 * Query parameters of a signed URL that carry its signature or the credential it was
 * made with: S3 (`X-Amz-…`, and `AWSAccessKeyId` with `Signature` in the older form, as
 * CloudFront's) and Google Cloud Storage (`X-Goog-…`). Hidden like a token, but not put
 * back by `data update` (see isSignedUrlParam).
 */
const SIGNED_NAMES = ["x-amz-signature", "x-amz-credential", "x-amz-security-token", "x-goog-signature", "x-goog-credential", "awsaccesskeyid", "signature"];
const SECRET_PARAM = new RegExp(`^(?:${[...SECRET_NAMES, ...SIGNED_NAMES].join("|")})$`, "i");
const SIGNED_PARAM = new RegExp(`^(?:${SIGNED_NAMES.join("|")})$`, "i");
/**
 * The same in text: the value runs to the next `&`, `#` or white space, or the end, as
 * redactUrl's `?password=` does. A query value may hold `/`, `:`, `@`, `)` and more
 * unescaped, so where text holds a URL with its secret, a `)` or `:` right after the URL
 * is hidden with it: too much hidden is harmless, too little is not.
 */
const SECRET_PARAM_IN_TEXT = new RegExp(`([?&](?:${[...SECRET_NAMES, ...SIGNED_NAMES].join("|")})=)([^&#\\s]*)`, "gi");
/**
 * A value hidden already, with the punctuation that followed it in a message
 * (`(…?token=***): HTTP 404`, from displayLocation), or the `.sha256` a checksum's place
 * appends to it (`…?token=***.sha256`, checksum.ts's shownPlace): kept as it is, so that
 * redacting twice changes nothing more. (A secret of three asterisks and punctuation
 * alone would be shown: it hides nothing.)
 */
const REDACTED_VALUE = /^\*\*\*(?:\.sha256)?[)\]:;,.'"]*$/;
/**
 * `http(s)://userinfo@`: the user name may itself be a secret (IPinfo's token as a Basic
 * user). It runs to the last `@` before the host, as a URL parser reads it (a user name
 * may hold `@`).
 */
const HTTP_USERINFO = /\b(https?:\/\/)[^\s/?#]*@/gi;

/**
 * `text` with every credential in a URL in it hidden: user info of http(s) URLs
 * (`https://***@host/…`), passwords of any URL (redactUrl: `postgres://user:***@…`) and
 * secret query parameters (`?token=***`).
 */
export function redactSecrets(text: string): string {
  return redactUrl(text)
    .replace(HTTP_USERINFO, "$1***@")
    .replace(SECRET_PARAM_IN_TEXT, (_, name: string, value: string) => `${name}${REDACTED_VALUE.test(value) ? value : "***"}`);
}

/** Whether a URL carries credentials: user info, or a secret query parameter. */
export function hasCredentials(url: URL): boolean {
  if (url.username !== "" || url.password !== "") return true;
  for (const name of url.searchParams.keys()) if (SECRET_PARAM.test(name)) return true;
  return false;
}

/**
 * Whether a secret query parameter is an expiring signed URL's: made for one URL and for
 * a while (S3 and Google's for at most 7 days), and several that go together, so one
 * value from IPLOOKUP_DOWNLOAD_AUTH cannot stand for it as it stands for a token.
 * (Azure's `sig` is not one: see SECRET_NAMES.)
 */
export function isSignedUrlParam(name: string): boolean {
  return SIGNED_PARAM.test(name);
}

/** Whether a query parameter is Azure's SAS signature, `sig`. */
export function isSasSignature(name: string): boolean {
  return name.toLowerCase() === "sig";
}

/**
 * The value `data update` puts back for a secret query parameter it took out, from
 * IPLOOKUP_DOWNLOAD_AUTH's entry for the host: the password, or the user name when there
 * is none (IPinfo: `ipinfo.io=TOKEN:`). A SAS `sig` is base64 (`+`, `/`, `=`), which an
 * operator copies from the URL percent-encoded (`%2B`, `%2F`, `%3D`) as often as not:
 * decoded base64 never holds `%`, so a value with `%XX` in it is taken as encoded and
 * decoded, and both forms work. (URLSearchParams encodes the value again.)
 */
export function restoredValue(name: string, credentials: Credentials): string {
  const value = credentials.password || credentials.user;
  if (!isSasSignature(name) || !/%[0-9A-Fa-f]{2}/.test(value)) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * Why a recorded file cannot be fetched again, if it cannot: its URL, or its `--sha256
 * URL`, was an expiring signed URL whose signature was not stored, and one value from
 * IPLOOKUP_DOWNLOAD_AUTH cannot stand for it (see isSignedUrlParam): only a new signed
 * URL can be fetched. `data update` refuses such a source before downloading anything,
 * and `serve --update-every` such a file at start. (Here, not in acquire.ts, so that the
 * server's check does not load the downloader.)
 */
export function unkeptSignature(file: {
  readonly location: string;
  readonly secretParams?: readonly string[];
  readonly sha256?: string;
  readonly sha256SecretParams?: readonly string[];
}): string | undefined {
  const unkept = (url: string, names: readonly string[] | undefined) => (isUrl(url) ? takenOut(new URL(url), names).filter(isSignedUrlParam) : []);
  const ofLocation = unkept(file.location, file.secretParams);
  const ofChecksum = file.sha256 === undefined ? [] : unkept(file.sha256, file.sha256SecretParams);
  if (ofLocation.length === 0 && ofChecksum.length === 0) return undefined;
  const what = ofLocation.length > 0 ? `it was downloaded from a signed URL, whose ${ofLocation.join(", ")}` : `its checksum (--sha256 URL) was downloaded from a signed URL, whose ${ofChecksum.join(", ")}`;
  return `${what} iplookup does not keep (a signature expires): import it again with a new signed URL ('data import')`;
}

/**
 * The secret query parameters a recorded URL was stored without: of `names` (those the
 * recipe recorded with it, secretParamNames at import), the ones its query lacks. A
 * recipe written before a parameter was secret still holds it, and it is used as it is.
 */
export function takenOut(url: URL, names: readonly string[] | undefined): string[] {
  return (names ?? []).filter((name) => !url.searchParams.has(name));
}

/** The names of a URL's query parameters that carry secrets (`token`, `license_key`, …). */
export function secretParamNames(url: URL): string[] {
  return [...new Set([...url.searchParams.keys()].filter((name) => SECRET_PARAM.test(name)))];
}

/** A URL as the recipe stores it: without user info and without secret query parameters. */
export function storedUrl(text: string): string {
  const url = new URL(text);
  url.username = "";
  url.password = "";
  for (const name of [...url.searchParams.keys()]) if (SECRET_PARAM.test(name)) url.searchParams.delete(name);
  // Placeholders ({YYYY}) are percent-encoded by URL's setters: keep them readable.
  return url.href.replaceAll("%7B", "{").replaceAll("%7D", "}");
}

/** Basic credentials, from a URL's user info or IPLOOKUP_DOWNLOAD_AUTH. */
export interface Credentials {
  readonly user: string;
  readonly password: string;
}

export function basicAuthorization(credentials: Credentials): string {
  return `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString("base64")}`;
}

/** The user info of a URL, decoded; undefined when it has none. */
export function userInfoOf(url: URL): Credentials | undefined {
  if (url.username === "" && url.password === "") return undefined;
  return { user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
}

/**
 * IPLOOKUP_DOWNLOAD_AUTH: one or more entries, separated by white space, each
 * `USER:PASSWORD` (for every host that has no entry of its own) or
 * `HOST=USER:PASSWORD` (for downloads from HOST). Sent as HTTP Basic authentication to
 * the host the download starts at, never after a redirect to another origin.
 */
export class DownloadAuth {
  private constructor(
    private readonly byHost: ReadonlyMap<string, Credentials>,
    private readonly fallback: Credentials | undefined,
  ) {}

  static none(): DownloadAuth {
    return new DownloadAuth(new Map(), undefined);
  }

  /** Parses the variable; throws an Error that never quotes the value. */
  static parse(text: string | undefined): DownloadAuth {
    const byHost = new Map<string, Credentials>();
    let fallback: Credentials | undefined;
    for (const entry of (text ?? "").split(/\s+/).filter((part) => part !== "")) {
      const hostMatch = /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d+)?=(.*)$/.exec(entry);
      const [host, pair] = hostMatch ? [(hostMatch[1] as string).toLowerCase().replace(/^\[|\]$/g, ""), hostMatch[2] as string] : [undefined, entry];
      const colon = pair.indexOf(":");
      if (colon <= 0) throw new Error("IPLOOKUP_DOWNLOAD_AUTH: each entry must be USER:PASSWORD or HOST=USER:PASSWORD");
      const credentials = { user: pair.slice(0, colon), password: pair.slice(colon + 1) };
      if (host === undefined) fallback = credentials;
      else byHost.set(host, credentials);
    }
    return new DownloadAuth(byHost, fallback);
  }

  /** The credentials for a download from `url`'s host, if any. */
  for(url: URL): Credentials | undefined {
    return this.byHost.get(url.hostname.toLowerCase().replace(/^\[|\]$/g, "")) ?? this.fallback;
  }
}

/**
 * A location's month placeholders filled in: `{YYYY}` and `{MM}` (UTC), for publishers
 * whose URL names the month (DB-IP lite: `dbip-city-lite-{YYYY}-{MM}.mmdb.gz`).
 * `monthsBack` 1 gives the month before.
 */
export function expandTemplate(location: string, now: Date, monthsBack = 0): string {
  const date = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - monthsBack, 1));
  return location.replaceAll("{YYYY}", String(date.getUTCFullYear())).replaceAll("{MM}", String(date.getUTCMonth() + 1).padStart(2, "0"));
}

export function isTemplate(location: string): boolean {
  return location.includes("{YYYY}") || location.includes("{MM}");
}
