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
 * it (`/allowed_cidrs/0: Expected string`), so that one is given instead.
 */
export function validationDetail(error: unknown): string {
  const first = (error as { all?: ReadonlyArray<SchemaError> } | undefined)?.all?.[0];
  if (!first) return "the request body does not have the expected shape";
  const shown = insideUnion(first) ?? first;
  const where = shown.path ? shown.path : "the body";
  const own = typeof shown.schema?.error === "string" ? shown.schema.error : undefined;
  return `${where}: ${own ?? shown.summary ?? shown.message ?? "unexpected value"}`;
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
