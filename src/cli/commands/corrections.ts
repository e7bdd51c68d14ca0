import { AuditLog, CLI_ACTOR } from "../../audit/audit-log.ts";
import { ConfigError } from "../../config/config-error.ts";
import { CorrectionService } from "../../corrections/correction-service.ts";
import type { Store } from "../../store/store.ts";
import { CorrectionError, checkCorrectionFields, checkNote, parseCorrectionBlock } from "../../corrections/correction-rules.ts";
import { correctionJson, fieldsText } from "../../corrections/correction-json.ts";
import { PRIVACY_SIGNALS } from "../../corrections/correction.ts";
import { parseCommandArgs } from "../args.ts";
import { STATE_FLAG_HELP } from "../flag-help.ts";
import { CommandFailed, type CliContext, type Command } from "../command.ts";
import { EXIT_OK } from "../io.ts";
import { howToRun } from "../command-name.ts";
import { formatTable } from "../table.ts";
import { withStore } from "../with-store.ts";

/** The text flags of `corrections set` and the field each sets. */
const TEXT_FLAGS = { "as-name": "as_name", city: "city" } as const;

const set: Command = {
  name: "set",
  summary: "correct what the data says about a block of addresses",
  help: `Usage: iplookup corrections set CIDR [--country XX] [--asn N] [--as-name TEXT] [--city TEXT]
                                [--hosting true|false] [--tor true|false] [--vpn true|false]
                                [--relay true|false] [--proxy true|false] [--service TEXT]
                                [--note TEXT]

Sets the local correction of a block (192.0.2.0/24, 2001:db8::/32; a bare address is a
block of one): every lookup of an address in it answers the fields named here instead
of what the data says, on every server sharing the state within a second, and in
'iplookup lookup'. Where blocks nest, each field comes from the most specific block
that names it. Setting a block again replaces its correction whole: name every field
to correct. The block's host bits must be zero (192.0.2.0/24, not 192.0.2.1/24).

  --country XX       ISO 3166-1 alpha-2 code; country (and continent) follow it
  --asn N            AS number, 0 to 4294967295
  --as-name TEXT     the AS's name
  --city TEXT        the city
  --hosting, --tor, --vpn, --relay, --proxy true|false
                     the privacy signals
  --service TEXT     the provider or service (privacy.service)
  --note TEXT        why, for the people who read 'corrections list'
An empty --country, --asn, --as-name, --city or --service (--city '') makes the
answer say null there; the signals take only true or false.
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, {
      settings: ["state"],
      strings: ["country", "asn", "as-name", "city", ...PRIVACY_SIGNALS, "service", "note"],
      positionals: [1, 1], arguments: ["CIDR"],
    });
    const text = (name: string) => flags[name] as string | undefined;
    const fields: Record<string, unknown> = {};
    const country = text("country");
    if (country !== undefined) fields.country_code = country === "" ? null : country;
    const asn = text("asn");
    if (asn !== undefined) fields.asn = asn === "" ? null : /^(0|[1-9][0-9]{0,9})$/.test(asn) ? Number(asn) : asn;
    for (const [flag, field] of Object.entries(TEXT_FLAGS)) {
      const value = text(flag);
      if (value !== undefined) fields[field] = value === "" ? null : value;
    }
    const privacy: Record<string, unknown> = {};
    for (const signal of PRIVACY_SIGNALS) {
      const value = text(signal);
      if (value === undefined) continue;
      if (value !== "true" && value !== "false") throw new ConfigError(`--${signal}: "${value}" is not true or false`);
      privacy[signal] = value === "true";
    }
    const service = text("service");
    if (service !== undefined) privacy.service = service === "" ? null : service;
    if (Object.keys(privacy).length > 0) fields.privacy = privacy;
    let block;
    let checked;
    let note;
    try {
      block = parseCorrectionBlock(positionals[0] as string);
      checked = checkCorrectionFields(fields);
      note = checkNote(text("note") ?? null);
    } catch (error) {
      if (error instanceof CorrectionError) throw new ConfigError(error.message.replace(/^([a-z_.]+):/, (_, field: string) => `${flagOf(field)}:`));
      throw error;
    }
    const correction = await withStore(flags, context, { create: true }, (store) => correctionService(store, context).set(CLI_ACTOR, block.cidr, checked, note));
    context.io.out(`Corrected ${correction.cidr}: ${fieldsText(correction)}.`);
    return EXIT_OK;
  },
};

/** The flag that sets a field, for messages: `as_name` → `--as-name`, `privacy.tor` → `--tor`. */
function flagOf(field: string): string {
  if (field === "country_code") return "--country";
  return `--${field.replace(/^privacy\./, "").replaceAll("_", "-")}`;
}

const list: Command = {
  name: "list",
  summary: "list the local corrections",
  help: `Usage: iplookup corrections list [--json]

Lists every local correction, in address order (IPv4 first), with the fields it
corrects, its note and when it was last set.

  --json           print a JSON array, as GET /admin/v1/corrections lists them
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: ["state"], booleans: ["json"] });
    const corrections = await withStore(flags, context, { create: false, readOnly: true }, (store) => store.listCorrections());
    if (flags.json) {
      context.io.out(JSON.stringify(corrections.map(correctionJson)));
    } else if (corrections.length === 0) {
      context.io.out(`No corrections. Add one with: ${howToRun(context, "corrections set CIDR --country XX")}`);
    } else {
      context.io.out(formatTable(["CIDR", "FIELDS", "NOTE", "UPDATED"], corrections.map((c) => [c.cidr, fieldsText(c), c.note ?? "", c.updatedAt])));
    }
    return EXIT_OK;
  },
};

const remove: Command = {
  name: "remove",
  summary: "remove a block's correction",
  help: `Usage: iplookup corrections remove CIDR

Removes the local correction of the block (written as 'corrections list' shows it, or
any other way of writing the same block): lookups answer what the data says there
again, on every server within a second.
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], positionals: [1, 1], arguments: ["CIDR"] });
    let cidr: string;
    try {
      cidr = parseCorrectionBlock(positionals[0] as string).cidr;
    } catch (error) {
      if (error instanceof CorrectionError) throw new ConfigError(error.message);
      throw error;
    }
    const removed = await withStore(flags, context, { create: false }, (store) => correctionService(store, context).remove(CLI_ACTOR, cidr));
    if (!removed) throw new CommandFailed(`there is no correction of ${cidr}`);
    context.io.out(`Removed the correction of ${removed.cidr}.`);
    return EXIT_OK;
  },
};

function correctionService(store: Store, context: CliContext): CorrectionService {
  return new CorrectionService(store, new AuditLog(store, () => context.now()));
}

export const CORRECTION_COMMANDS: readonly Command[] = [set, list, remove];
