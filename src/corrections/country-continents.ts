/**
 * The continent of every ISO 3166-1 alpha-2 country code, as GeoNames and MaxMind
 * assign them (Turkey, Cyprus and the Caucasus in Asia; Russia in Europe; the US Minor
 * Outlying Islands in Oceania), and XK (Kosovo), which the data sets use too. A
 * corrected `country_code` must be one of these codes, and brings its continent along
 * into results that carry one.
 */
const BY_CONTINENT: Readonly<Record<string, string>> = {
  AF: "DZ AO BJ BW BF BI CV CM CF TD KM CG CD CI DJ EG GQ ER SZ ET GA GM GH GN GW KE LS LR LY MG MW ML MR MU YT MA MZ NA NE NG RE RW SH ST SN SC SL SO ZA SS SD TZ TG TN UG EH ZM ZW",
  AN: "AQ BV GS HM TF",
  AS: "AF AM AZ BH BD BT IO BN KH CN CX CC CY GE HK IN ID IR IQ IL JP JO KZ KW KG LA LB MO MY MV MN MM NP KP OM PK PS PH QA SA SG KR LK SY TW TJ TH TL TR TM AE UZ VN YE",
  EU: "AX AL AD AT BY BE BA BG HR CZ DK EE FO FI FR DE GI GR GG VA HU IS IE IM IT JE XK LV LI LT LU MT MD MC ME NL MK NO PL PT RO RU SM RS SK SI ES SJ SE CH UA GB",
  NA: "AI AG AW BS BB BZ BM BQ VG CA KY CR CU CW DM DO SV GL GD GP GT HT HN JM MQ MX MS NI PA PR BL KN LC MF PM VC SX TT TC US VI",
  OC: "AS AU CK FJ PF GU KI MH FM NR NC NZ NU NF MP PW PG PN WS SB TK TO TV UM VU WF",
  SA: "AR BO BR CL CO EC FK GF GY PY PE SR UY VE",
};

const CONTINENT_OF: ReadonlyMap<string, string> = new Map(
  Object.entries(BY_CONTINENT).flatMap(([continent, countries]) => countries.split(" ").map((country) => [country, continent] as const)),
);

/** Every country code a correction accepts, sorted. */
export const COUNTRY_CODES: readonly string[] = [...CONTINENT_OF.keys()].sort();

/** The continent code (AF, AN, AS, EU, NA, OC, SA) of a country code, or null for a code that is not one. */
export function continentOf(countryCode: string): string | null {
  return CONTINENT_OF.get(countryCode) ?? null;
}
