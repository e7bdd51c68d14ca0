/**
 * How many bytes to set aside for each result of the next answer, learnt from the
 * answers written so far. A writer that starts too small grows by doubling, allocating a
 * new buffer and copying what it holds: with a fixed guess of 192 bytes (the default
 * data's results take about 256), a batch of 1,000 spent a tenth of its CPU growing its
 * writer, a batch of 100 a twentieth.
 *
 * The estimate jumps to the latest answer's average with an eighth of headroom when
 * that is larger, and sinks by a sixteenth of the gap when it is smaller: a data set
 * with longer records (city names) is learnt from one answer, and one unusual answer
 * does not leave every later one with a buffer far larger than it needs.
 */
export const FIRST_RESULT_BYTES = 192;

export function nextResultBytes(estimate: number, answerBytes: number, results: number): number {
  if (results === 0) return estimate;
  const wanted = Math.ceil((answerBytes / results) * 1.125);
  if (wanted >= estimate) return wanted;
  return estimate - Math.floor((estimate - wanted) / 16);
}
