import { showingControls } from "../../access/plain-text.ts";
import { CLI_ACTOR } from "../../audit/audit-log.ts";
import { ConfigError } from "../../config/config-error.ts";
import { Deliverer } from "../../events/deliverer.ts";
import { EVENT_TYPES } from "../../events/event-types.ts";
import { ATTEMPT_TIMEOUT_MS } from "../../events/send.ts";
import { deliveryJson, testResultJson, webhookJson } from "../../events/webhook-json.ts";
import { WebhookRefusal, Webhooks } from "../../events/webhooks.ts";
import type { DeliveryRecord, Store } from "../../store/store.ts";
import { parseCommandArgs } from "../args.ts";
import { howToRun } from "../command-name.ts";
import { CommandFailed, type CliContext, type Command } from "../command.ts";
import { STATE_FLAG_HELP } from "../flag-help.ts";
import { EXIT_FAILED, EXIT_OK } from "../io.ts";
import { formatTable } from "../table.ts";
import { withStore, type WithStoreOptions } from "../with-store.ts";

/** Runs webhook work on the state, turning refusals into the command line's: bad input exits 2, no such webhook 1. */
function withWebhooks<T>(flags: Readonly<Record<string, unknown>>, context: CliContext, options: WithStoreOptions, work: (webhooks: Webhooks, store: Store) => Promise<T>): Promise<T> {
  return withStore(flags, context, options, async (store) => {
    try {
      return await work(new Webhooks(store, context.now), store);
    } catch (error) {
      if (error instanceof WebhookRefusal) {
        if (error.kind === "invalid") throw new ConfigError(error.message);
        throw new CommandFailed(`${error.message} (see '${howToRun(context, "webhooks list")}')`);
      }
      throw error;
    }
  });
}

const add: Command = {
  name: "add",
  summary: "register a webhook and print its signing secret once",
  help: `Usage: iplookup webhooks add URL --events EVENT,... [--json]

Registers a webhook: every event named is POSTed to URL as JSON, signed as Standard
Webhooks does (webhook-id, webhook-timestamp, webhook-signature), and retried with
backoff for 24 hours until the receiver answers 2xx. Prints the signing secret
(whsec_...) once: the receiver verifies each delivery with it.

URL is http:// or https:// to any host (one on this machine included); redirects are
not followed. A URL another webhook has already is refused (exit 2), naming it: remove
that one first to change its events. The events: ${EVENT_TYPES.join(", ")}.

  --events LIST    the events to send, comma-separated
  --json           print {"id","url","events","created_at","secret"}
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], strings: ["events"], booleans: ["json"], positionals: [1, 1], arguments: ["URL"] });
    if (typeof flags.events !== "string") throw new ConfigError(`--events is required: some of ${EVENT_TYPES.join(", ")}`);
    const events = flags.events.split(",");
    const issued = await withWebhooks(flags, context, { create: true }, (webhooks) => webhooks.add(CLI_ACTOR, positionals[0] as string, events));
    if (flags.json) {
      context.io.out(JSON.stringify({ ...webhookJson(issued.webhook), secret: issued.secret }));
      return EXIT_OK;
    }
    context.io.out(`Added webhook ${issued.webhook.id} for ${issued.webhook.events.join(", ")}.`);
    context.io.out(`Signing secret (shown only now; the receiver verifies deliveries with it):\n\n  ${issued.secret}\n`);
    context.io.out(`Send a test event: ${howToRun(context, `webhooks test ${issued.webhook.id}`)}`);
    return EXIT_OK;
  },
};

const list: Command = {
  name: "list",
  summary: "list webhooks (never their secrets)",
  help: `Usage: iplookup webhooks list [--json]

Lists every webhook with its URL and events. Secrets are never shown.

  --json           print a JSON array
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: ["state"], booleans: ["json"] });
    const all = await withWebhooks(flags, context, { create: false, readOnly: true }, (webhooks) => webhooks.list());
    if (flags.json) context.io.out(JSON.stringify(all.map(webhookJson)));
    else if (all.length === 0) context.io.out(`No webhooks yet. Add one with: ${howToRun(context, "webhooks add URL --events usage.threshold")}`);
    else context.io.out(formatTable(["ID", "URL", "EVENTS", "CREATED"], all.map((w) => [w.id, w.url, w.events.join(","), w.createdAt])));
    return EXIT_OK;
  },
};

const remove: Command = {
  name: "remove",
  summary: "remove a webhook and its pending deliveries",
  help: `Usage: iplookup webhooks remove ID

Removes a webhook: nothing more is sent to it, pending deliveries included. An unknown
ID exits 1.
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], positionals: [1, 1], arguments: ["ID"] });
    const id = positionals[0] as string;
    await withWebhooks(flags, context, { create: false }, (webhooks) => webhooks.remove(CLI_ACTOR, id));
    context.io.out(`Removed webhook ${id}.`);
    return EXIT_OK;
  },
};

/**
 * How long `webhooks test` waits for the attempt of a server that took its event first:
 * an attempt's longest (ATTEMPT_TIMEOUT_MS) and a few seconds for that server to record it.
 */
const TEST_WAIT_MS = ATTEMPT_TIMEOUT_MS + 5000;

const test: Command = {
  name: "test",
  summary: "send a test event to a webhook now and show the answer",
  help: `Usage: iplookup webhooks test ID [--json]

Sends a test event (type webhook.test) to the webhook at once, signed like every
delivery, and shows the receiver's answer (status and the first 256 bytes of its body).
A failed test is retried like any delivery. Exits 0 when the receiver answered 2xx, and 1
when it did not (another status, or no answer). When a running server takes the test
event first, waits for that server's attempt (up to ${TEST_WAIT_MS / 1000} s) and shows it; none by
then exits 1.

  --json           print {"event_id","attempt":{...}}
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], booleans: ["json"], positionals: [1, 1], arguments: ["ID"] });
    const id = positionals[0] as string;
    const { eventId, attempt } = await withWebhooks(flags, context, { create: false }, async (webhooks, store) => {
      const sent = await webhooks.test(id, new Deliverer({ store, now: () => context.now().getTime() }));
      // A running server's deliverer claimed it first: its outcome decides the exit code too.
      return sent.attempt ? sent : { eventId: sent.eventId, attempt: await webhooks.firstAttempt(id, sent.eventId, TEST_WAIT_MS) };
    });
    const ok = attempt?.state === "delivered";
    if (flags.json) {
      context.io.out(JSON.stringify(testResultJson(eventId, attempt)));
    } else if (!attempt) {
      context.io.out(`Test event ${eventId} is queued; a running server is sending it and has not recorded an answer yet (see '${howToRun(context, `webhooks deliveries ${id}`)}').`);
    } else {
      // The receiver's answer and errors are shown with control and bidirectional
      // characters written out (`\u001b`, `\u202e`), as the tables show them: a
      // receiver's bytes must not act on the operator's terminal nor reorder its line.
      const answer = attempt.status === null ? `no answer (${showingControls(attempt.error ?? "")})` : `HTTP ${attempt.status} in ${Math.round(attempt.durationMs)} ms`;
      context.io.out(`Test event ${eventId}: ${answer}.`);
      if (attempt.response) context.io.out(`Answer (first 256 bytes): ${showingControls(attempt.response)}`);
      if (!ok) context.io.out(`It will be tried again with backoff; see '${howToRun(context, `webhooks deliveries ${id}`)}'.`);
    }
    return ok ? EXIT_OK : EXIT_FAILED;
  },
};

const deliveries: Command = {
  name: "deliveries",
  summary: "a webhook's latest deliveries and their attempts",
  help: `Usage: iplookup webhooks deliveries ID [--json]

Lists the webhook's latest 50 deliveries, newest first: the event, its state (pending,
delivered, failed) and every attempt with its time, status, duration and the first 256
bytes of the answer (or the error), one line each; a pending delivery's last line says
when it is tried next. Control and bidirectional characters of an answer are written
out (\u001b, \u202e).

  --json           print a JSON array
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], booleans: ["json"], positionals: [1, 1], arguments: ["ID"] });
    const records = await withWebhooks(flags, context, { create: false, readOnly: true }, (webhooks) => webhooks.deliveries(positionals[0] as string));
    if (flags.json) {
      context.io.out(JSON.stringify(records.map(deliveryJson)));
      return EXIT_OK;
    }
    if (records.length === 0) {
      context.io.out("No deliveries yet.");
      return EXIT_OK;
    }
    context.io.out(formatTable(["EVENT", "TYPE", "STATE", "ATTEMPT", "AT", "RESULT", "DURATION", "ANSWER"], records.flatMap(deliveryRows)));
    return EXIT_OK;
  },
};

/**
 * A delivery's lines: one per attempt (its time, the status or the error, the duration
 * and the answer's first 256 bytes), then, while it is pending, when it is tried next.
 * formatTable writes out the control and bidirectional characters of a receiver's
 * answer or error, so that they cannot act on the terminal or reorder the line.
 */
function deliveryRows(record: DeliveryRecord): string[][] {
  const delivery = [record.eventId, record.eventType, record.state];
  const rows = record.attempts.map((attempt) => [
    ...delivery,
    String(attempt.attempt),
    attempt.at,
    attempt.status === null ? (attempt.error ?? "no answer") : `HTTP ${attempt.status}`,
    `${Math.round(attempt.durationMs)} ms`,
    attempt.response ?? "",
  ]);
  if (record.nextAttemptAt) rows.push([...delivery, "next", record.nextAttemptAt, "due", "", ""]);
  if (rows.length === 0) rows.push(delivery);
  return rows;
}

export const WEBHOOK_COMMANDS: readonly Command[] = [add, list, remove, test, deliveries];
