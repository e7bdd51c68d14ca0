/**
 * Passwords out of text that may hold a URL: a state location (`postgres://user:pw@host/db`)
 * is printed in start-up lines and error messages, and its password must never be.
 */

/**
 * `scheme://user:password@`. The password runs to the last `@` of the whitespace-free run
 * of text: a URL parser takes the last `@` before the host, so a password holding `@` or
 * `:` is cut whole. (Text after the URL that holds an `@` of its own is hidden too: too
 * much hidden is harmless, too little is not.)
 */
const USERINFO_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@]*):\S*@/gi;
/**
 * A query parameter whose name holds "password": libpq's `?password=`, and the passphrase
 * of a client key, `?sslpassword=`; any name like them is hidden, whatever it is.
 */
const QUERY_PASSWORD = /([?&][^=&#\s]*password[^=&#\s]*=)([^&#\s]*)/gi;
/**
 * A value hidden already, with the punctuation that followed it in a message: a store's
 * label is redacted when it is made, and a message that quotes it (`…?password=***: Failed
 * to connect`) is redacted again where it is printed. The value runs to the next `&`,
 * `#` or white space, since a value may hold `:` or `)` unescaped; this keeps that
 * punctuation, so that redacting twice changes nothing more (as redactSecrets does for
 * `?token=`). A password of three asterisks and punctuation alone would be shown: it
 * hides nothing.
 */
const REDACTED_VALUE = /^\*\*\*[)\]:;,.'"]*$/;

/** `text` with every password in a URL in it replaced by `***`. */
export function redactUrl(text: string): string {
  return text
    .replace(USERINFO_PASSWORD, "$1:***@")
    .replace(QUERY_PASSWORD, (_, name: string, value: string) => `${name}${REDACTED_VALUE.test(value) ? value : "***"}`);
}

/** Whether a --state location names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}
