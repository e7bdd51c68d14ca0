import { ValueErrorType } from "@sinclair/typebox/errors";

/** The parts of the framework's validation error (TypeBox's ValueError, with a summary) read here. */
interface SchemaError {
  type?: number;
  path?: string;
  value?: unknown;
  message?: string;
  summary?: string;
  /** `error`: the schema's own message (Elysia's keyword), used instead of TypeBox's, which quotes a pattern as it is. */
  schema?: { anyOf?: ReadonlyArray<{ type?: unknown }>; error?: unknown };
  /** For a union: one iterator of errors per member of `anyOf`, in the same order. */
  errors?: ReadonlyArray<{ First(): SchemaError | undefined }>;
}

/**
 * A one-line description of what is wrong with a body, e.g. `/ips: Expected array`.
 *
 * A nullable member (`allowed_cidrs: [1]`) fails as a union, whose own message only
 * lists the members' kinds ("should be one of: 'array', 'null'"). When the value is of
 * the kind of exactly one member, that member's first error says what is wrong inside
 * it (`/allowed_cidrs/0: Expected string but found a number: 1`), so that one is given instead.
 */
export function validationDetail(error: unknown): string {
  const first = (error as { all?: ReadonlyArray<SchemaError> } | undefined)?.all?.[0];
  if (!first) return "the request body does not have the expected shape";
  const shown = insideUnion(first) ?? first;
  const where = shown.path ? shown.path : "the body";
  const own = typeof shown.schema?.error === "string" ? shown.schema.error : undefined;
  // The framework's summary of this one quotes the value through String(): ["1.1.1.1"]
  // reads as the string 1.1.1.1, an object as [object Object], nested empty arrays as nothing.
  const kind = shown.type === ValueErrorType.String ? `Expected string but found ${found(shown.value)}` : undefined;
  return `${where}: ${own ?? kind ?? shown.summary ?? shown.message ?? "unexpected value"}`;
}

/** At most this many characters of a value are quoted in a detail. */
const SHOWN_CHARS = 40;

/** What a value is, e.g. `an array: ["1.1.1.1"]`, its JSON cut to SHOWN_CHARS characters. */
function found(value: unknown): string {
  const kind = jsonKind(value);
  if (kind === "null") return "null";
  const article = kind === "array" || kind === "object" ? "an" : "a";
  return `${article} ${kind}: ${shortJson(value)}`;
}

/**
 * The value as JSON, cut with "…" after SHOWN_CHARS characters. The rendering stops as
 * soon as it is past that, so its time and depth of recursion stay bounded however long
 * or deeply nested the body's value is (a body may hold up to the body limit of them).
 */
function shortJson(value: unknown): string {
  let out = "";
  const put = (text: string) => {
    out += text;
    return out.length <= SHOWN_CHARS;
  };
  const walk = (item: unknown): boolean => {
    if (Array.isArray(item)) {
      if (!put("[")) return false;
      for (let at = 0; at < item.length; at++) if ((at > 0 && !put(",")) || !walk(item[at])) return false;
      return put("]");
    }
    if (item !== null && typeof item === "object") {
      if (!put("{")) return false;
      let first = true;
      for (const name in item) {
        if ((!first && !put(",")) || !put(`${JSON.stringify(name.slice(0, SHOWN_CHARS))}:`) || !walk((item as Record<string, unknown>)[name])) return false;
        first = false;
      }
      return put("}");
    }
    if (typeof item === "string") return put(JSON.stringify(item.slice(0, SHOWN_CHARS)));
    return put(String(JSON.stringify(item)));
  };
  if (walk(value)) return out;
  // Not between the two halves of a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(out[SHOWN_CHARS - 1] ?? "") ? SHOWN_CHARS - 1 : SHOWN_CHARS;
  return `${out.slice(0, end)}…`;
}

/** The deepest error inside the one union member whose kind the value has; undefined when none or several. */
function insideUnion(error: SchemaError): SchemaError | undefined {
  if (error.type !== ValueErrorType.Union || !error.schema?.anyOf || !error.errors) return undefined;
  const kind = jsonKind(error.value);
  const members = error.schema.anyOf.flatMap((member, at) => (kindsOf(member.type).includes(kind) ? [at] : []));
  if (members.length !== 1) return undefined;
  const inner = error.errors[members[0]!]?.First();
  if (!inner) return undefined;
  return insideUnion(inner) ?? inner;
}

/** JSON Schema's kinds, an integer counted as a number: 1.5 for an integer member is that member's error. */
function kindsOf(type: unknown): string[] {
  const kinds = Array.isArray(type) ? type.map(String) : typeof type === "string" ? [type] : [];
  return kinds.map((kind) => (kind === "integer" ? "number" : kind));
}

function jsonKind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}
