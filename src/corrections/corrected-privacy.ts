import { PRIVACY_SIGNALS, type CorrectionPrivacy } from "./correction.ts";

/** A privacy object's members by name: the five signals and `service`. */
export type PrivacyMembers = Record<string, boolean | string | null>;

/**
 * The privacy an answer says once a correction's `privacy` is laid over the data's
 * (`base`; null for a result without one, which gains the full object, its other
 * signals null: no source of them): each member named replaces the base's. A correction
 * that sets `hosting` or `relay` without naming `service` leaves the service only while
 * one of the two is still true (`service` names the source that set them, CONTRACT §15).
 * A new object; `base` is not changed.
 */
export function correctedPrivacy(base: Readonly<PrivacyMembers> | null, named: CorrectionPrivacy): PrivacyMembers {
  const privacy: PrivacyMembers = base === null ? emptyPrivacy() : { ...base };
  Object.assign(privacy, named);
  if (named.service === undefined && (named.hosting !== undefined || named.relay !== undefined) && privacy.hosting !== true && privacy.relay !== true) {
    privacy.service = null;
  }
  return privacy;
}

function emptyPrivacy(): PrivacyMembers {
  const privacy: PrivacyMembers = {};
  for (const signal of PRIVACY_SIGNALS) privacy[signal] = null;
  privacy.service = null;
  return privacy;
}
