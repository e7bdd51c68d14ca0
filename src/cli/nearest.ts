/**
 * The one name of `names` that `typed` most likely misspells: one or two letters wrong,
 * missing, extra or swapped (two only in a name of five letters or more), else null;
 * null too when two names are as near, as a guess between them would mislead.
 */
export function nearestName(typed: string, names: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  let tied = false;
  for (const name of names) {
    const distance = editDistance(typed.toLowerCase(), name.toLowerCase());
    if (distance < bestDistance) [best, bestDistance, tied] = [name, distance, false];
    else if (distance === bestDistance) tied = true;
  }
  const allowed = Math.min(typed.length, best?.length ?? 0) >= 5 ? 2 : 1;
  return best !== null && !tied && bestDistance > 0 && bestDistance <= allowed ? best : null;
}

/** Letters inserted, deleted, replaced, or two neighbours swapped (optimal string alignment). */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = rows[i] as number[];
      const above = rows[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j] as number, ((rows[i - 2] as number[])[j - 2] as number) + 1);
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}
