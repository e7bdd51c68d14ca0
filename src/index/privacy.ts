/**
 * The `privacy` member of every LookupResult (CONTRACT §15):
 *
 *   "privacy": {"hosting": true, "tor": false, "vpn": null, "relay": false, "proxy": null,
 *               "service": "Amazon EC2 (us-east-1)"}
 *
 * Each signal is true when a source of that signal in the data covers the address,
 * false when the data has a source of that signal and none covers it, and null when
 * the data has no source of that signal: never a guess. `service` names the provider
 * or service of the source that set `hosting` or `relay`, null otherwise. The members
 * are always written in this order.
 */
export const SIGNALS = ["hosting", "tor", "vpn", "relay", "proxy"] as const;

export type Signal = (typeof SIGNALS)[number];

export interface Privacy {
  readonly hosting: boolean | null;
  readonly tor: boolean | null;
  readonly vpn: boolean | null;
  readonly relay: boolean | null;
  readonly proxy: boolean | null;
  readonly service: string | null;
}

/** The signals that name a service: a hosting or relay source names its provider. */
export const SERVICE_SIGNALS: readonly Signal[] = ["hosting", "relay"];

export function isSignal(name: string): name is Signal {
  return (SIGNALS as readonly string[]).includes(name);
}

/** A privacy object with its members in the contract's order. */
export function privacyOf(signals: Readonly<Partial<Record<Signal, boolean | null>>>, service: string | null): Privacy {
  return {
    hosting: signals.hosting ?? null,
    tor: signals.tor ?? null,
    vpn: signals.vpn ?? null,
    relay: signals.relay ?? null,
    proxy: signals.proxy ?? null,
    service,
  };
}

/**
 * What an address no source of a signal covers answers: false for each signal the
 * data has a source of, null for the others; no service.
 */
export function uncoveredPrivacy(present: Iterable<Signal>): Privacy {
  const signals: Partial<Record<Signal, boolean>> = {};
  for (const signal of present) signals[signal] = false;
  return privacyOf(signals, null);
}

/** What a data file from before signals answers: it has no source of any signal. */
export const NO_SIGNALS: Privacy = privacyOf({}, null);

/**
 * Interns privacy objects, so that equal ones are one object: the data file's writer
 * lists a field's distinct values by identity, and a data set has few distinct ones.
 */
export class PrivacyTable {
  private readonly byKey = new Map<string, Privacy>();

  intern(privacy: Privacy): Privacy {
    const key = `${SIGNALS.map((signal) => String(privacy[signal])).join(",")}|${privacy.service ?? ""}|${privacy.service === null}`;
    let known = this.byKey.get(key);
    if (known === undefined) {
      known = privacyOf(privacy, privacy.service);
      this.byKey.set(key, known);
    }
    return known;
  }
}
