import { PRIVACY_SIGNALS, type CorrectionPrivacy } from "./correction.ts";

/** A privacy object's members by name: the five signals and `service`. */
export type PrivacyMembers = Record<string, boolean | string | null>;

/**
 * The privacy an answer says once the `privacy` of the corrections covering it are laid
 * over the data's (`base`; null for a result without one, which gains the full object,
 * its other signals null: no source of them), one after another, the outermost block's
 * first (see LayeredFields). A new object; `base` is not changed.
 */
export function correctedPrivacy(base: Readonly<PrivacyMembers> | null, layers: readonly CorrectionPrivacy[]): PrivacyMembers {
  const privacy: PrivacyMembers = base === null ? emptyPrivacy() : { ...base };
  for (const named of layers) layOver(privacy, named);
  return privacy;
}

/**
 * One correction's `privacy` laid over an answer's, in place: each member named replaces
 * the answer's. One that sets `hosting` or `relay` without naming `service` leaves the
 * service only while one of the two is still true (`service` names the source that set
 * them, CONTRACT §15), so a service named by a block around it goes too.
 */
function layOver(privacy: PrivacyMembers, named: CorrectionPrivacy): void {
  Object.assign(privacy, named);
  if (named.service === undefined && (named.hosting !== undefined || named.relay !== undefined) && privacy.hosting !== true && privacy.relay !== true) {
    privacy.service = null;
  }
}

function emptyPrivacy(): PrivacyMembers {
  const privacy: PrivacyMembers = {};
  for (const signal of PRIVACY_SIGNALS) privacy[signal] = null;
  privacy.service = null;
  return privacy;
}
