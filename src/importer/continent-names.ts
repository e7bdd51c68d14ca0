/** The seven continent codes MaxMind-format data uses, with their English names. */
const CONTINENTS: Readonly<Record<string, string>> = {
  AF: "Africa",
  AN: "Antarctica",
  AS: "Asia",
  EU: "Europe",
  NA: "North America",
  OC: "Oceania",
  SA: "South America",
};

export function continentName(code: string): string | null {
  return CONTINENTS[code] ?? null;
}
