import type { Address } from "../address/address.ts";
import { network128, network32 } from "../address/cidr.ts";
import { ipv4Text, ipv6Text } from "../address/parse.ts";
import { continentName } from "../importer/continent-names.ts";
import { countryName } from "../importer/country-names.ts";
import { IndexHit, type RangeIndex } from "../index/range-index.ts";
import { toLookupResult, type LookupResult } from "../lookup/lookup-result.ts";
import type { LayeredFields } from "./correction.ts";
import type { CorrectionHit } from "./correction-table.ts";
import { correctedPrefix } from "./corrected-network.ts";
import { correctedPrivacy, type PrivacyMembers } from "./corrected-privacy.ts";
import { continentOf } from "./country-continents.ts";

/**
 * The data's hit for an address no correction covers, its network narrowed so that it
 * crosses no correction's edge (CONTRACT §15): the largest block around the address
 * inside both the data's network and the corrections' segment. The same hit when it
 * needs no narrowing. (A corrected address's network is correctedResult's.)
 */
export function narrowHit(hit: IndexHit, address: Address, minPrefix: number): IndexHit {
  if (minPrefix <= hit.prefix) return hit;
  if (address.version === 4) return new IndexHit(network32(address.value, minPrefix), null, minPrefix, hit.membersBytes);
  return new IndexHit(-1, network128(address.words, minPrefix), minPrefix, hit.membersBytes);
}

/**
 * A lookup's result with a correction laid over it: every field the correction names
 * takes its value (see applyFields), and the network is the largest block around the
 * address on which the corrected answer is the same, inside the corrections' segment
 * (see correctedPrefix): wider than the data's network where the correction makes
 * neighbouring data segments answer alike, narrower where the segment ends first. An
 * address the data does not cover is found by its correction, the fields the correction
 * does not name null.
 */
export function correctedResult(address: Address, hit: IndexHit | null, index: RangeIndex, at: CorrectionHit & { fields: LayeredFields }): LookupResult {
  const result = toLookupResult(address, hit, index.notFoundRecord);
  result.found = true;
  const prefix = correctedPrefix(index, address, at.fields, at.minPrefix);
  result.network = address.version === 4 ? `${ipv4Text(network32(address.value, prefix))}/${prefix}` : `${ipv6Text(network128(address.words, prefix))}/${prefix}`;
  applyFields(result, at.fields);
  return result;
}

/**
 * Lays corrected fields over a result, in place:
 * - `asn`, `as_name`, `city`: the value named (a result without `city` gains it);
 * - `country_code`: the code, and `country` its English name; `continent_code` and
 *   `continent` follow when the result carries them (null for a null code);
 * - `privacy`: each covering block's, outermost first, its members named replacing the
 *   result's (see correctedPrivacy); a result without `privacy` gains the full object,
 *   its other signals null (no source of them).
 */
export function applyFields(result: LookupResult, fields: LayeredFields): void {
  if (fields.asn !== undefined) result.asn = fields.asn;
  if (fields.as_name !== undefined) result.as_name = fields.as_name;
  if (fields.city !== undefined) result.city = fields.city;
  if (fields.country_code !== undefined) {
    const code = fields.country_code;
    result.country_code = code;
    result.country = code === null ? null : countryName(code);
    const continent = code === null ? null : continentOf(code);
    if ("continent_code" in result) result.continent_code = continent;
    if ("continent" in result) result.continent = continent === null ? null : continentName(continent);
  }
  if (fields.privacy !== undefined) {
    const base = (result as { privacy?: unknown }).privacy;
    (result as Record<string, unknown>).privacy = correctedPrivacy(isObject(base) ? (base as PrivacyMembers) : null, fields.privacy);
  }
  // `privacy` stays the last member, as in every answer (a `city` added above came after it).
  const record = result as Record<string, unknown>;
  if ("privacy" in record) {
    const privacy = record.privacy;
    delete record.privacy;
    record.privacy = privacy;
  }
}

function isObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
