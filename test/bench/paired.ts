/**
 * The ratio of two measures taken side by side, round by round (subject / reference in
 * each round): the median of the rounds' ratios, and their range. On a shared machine
 * each measure drifts by tens of per cent within a minute; the ratio of one round, where
 * both met the same machine, moves far less, and the median steadies it further.
 */
export function pairedRatio(subject: readonly number[], reference: readonly number[]): { ratio: number; ratioRange: [number, number] } {
  const ratios = subject.map((value, round) => value / (reference[round] as number)).sort((a, b) => a - b);
  const middle = ratios.length >> 1;
  const ratio = ratios.length % 2 ? (ratios[middle] as number) : ((ratios[middle - 1] as number) + (ratios[middle] as number)) / 2;
  return { ratio, ratioRange: [ratios[0] as number, ratios.at(-1) as number] };
}
