import { expect, test } from "bun:test";
import { isPostgresUrl, redactUrl } from "../../src/store/redact-url.ts";

test("a URL's password becomes ***, wherever the URL sits in the text", () => {
  expect(redactUrl("postgres://iplookup:s3cret@db.internal:5432/iplookup")).toBe("postgres://iplookup:***@db.internal:5432/iplookup");
  expect(redactUrl("state: postgresql://u:p@h/db, ready")).toBe("state: postgresql://u:***@h/db, ready");
  expect(redactUrl("from postgres://a:one@h/x to postgres://b:two@h/y")).toBe("from postgres://a:***@h/x to postgres://b:***@h/y");
  expect(redactUrl("postgres://:only-password@h/db")).toBe("postgres://:***@h/db");
  expect(redactUrl("https://user:token@example.org/file.csv")).toBe("https://user:***@example.org/file.csv");
});

test("a password holding @, : or percent-escapes is hidden whole", () => {
  for (const password of ["p@ss", "a:b@c", "p%40ss%2Fw", "x@y@z", "!$&'()*+,;="]) {
    const text = redactUrl(`postgres://u:${password}@h:5432/db`);
    expect(text).toBe("postgres://u:***@h:5432/db");
  }
});

test("a password given as a query parameter is hidden too", () => {
  expect(redactUrl("postgres://u@h/db?sslmode=require&password=s3cret&x=1")).toBe("postgres://u@h/db?sslmode=require&password=***&x=1");
  expect(redactUrl("postgres://u@h/db?password=s3cret")).toBe("postgres://u@h/db?password=***");
});

test("every query parameter whose name holds \"password\" is hidden: sslpassword, and names like it", () => {
  expect(redactUrl("postgres://127.0.0.1/db?password=qpw&sslpassword=sp")).toBe("postgres://127.0.0.1/db?password=***&sslpassword=***");
  expect(redactUrl("postgres://h/db?sslmode=verify-full&SSLPassword=sp#x")).toBe("postgres://h/db?sslmode=verify-full&SSLPassword=***#x");
  expect(redactUrl("postgres://h/db?key_password=a&user=u")).toBe("postgres://h/db?key_password=***&user=u");
  expect(redactUrl("postgres://h/db?passfile=/root/.pgpass")).toBe("postgres://h/db?passfile=/root/.pgpass");
});

test("redacting text redacted already changes nothing more: the punctuation after a hidden query value stays", () => {
  // A store's label is redacted when it is made, and the message quoting it again where it is printed.
  for (const url of ["postgres://u@h/db?password=x&sslpassword=y", "postgres://u:p@h/db?password=x", "postgres://u:p@h/db", "postgres://h/db?sslmode=require&password=x"]) {
    for (const text of [`cannot reach the state database at ${redactUrl(url)}: Failed to connect`, `(${redactUrl(url)}), then`, `${redactUrl(url)}; check`, redactUrl(url)]) {
      expect(redactUrl(text)).toBe(text);
    }
  }
  expect(redactUrl(`at ${redactUrl("postgres://u:p@127.0.0.1:42199/db?password=x&sslpassword=y")}: Failed to connect`)).toBe(
    "at postgres://u:***@127.0.0.1:42199/db?password=***&sslpassword=***: Failed to connect",
  );
});

test("a query password that ends in punctuation, or is three asterisks and more, is hidden whole", () => {
  // A value may hold `:` and `)` unescaped: in text not yet redacted they go with it.
  expect(redactUrl("postgres://h/db?password=pw: Failed")).toBe("postgres://h/db?password=*** Failed");
  expect(redactUrl("postgres://h/db?password=a:b):")).toBe("postgres://h/db?password=***");
  expect(redactUrl("postgres://h/db?password=***x&sslpassword=x***")).toBe("postgres://h/db?password=***&sslpassword=***");
});

test("text without a password is left as it is", () => {
  for (const text of ["postgres://u@h/db", "/var/lib/iplookup/state.db", ":memory:", "user@example.org", "a:b@c", "postgres://h:5432/db"]) {
    expect(redactUrl(text)).toBe(text);
  }
});

test("isPostgresUrl: postgres:// and postgresql://, in any case; nothing else", () => {
  for (const yes of ["postgres://h/db", "postgresql://u:p@h/db", "POSTGRES://h/db"]) expect(isPostgresUrl(yes)).toBe(true);
  for (const no of ["state.db", "/tmp/postgres://x", "postgres:/h/db", "mysql://h/db", ":memory:", "./postgres"]) expect(isPostgresUrl(no)).toBe(false);
});
