const view = new Float32Array(1);
const bits = new Uint32Array(view.buffer);

/**
 * Many MMDB files store coordinates as 32-bit floats, which read back as doubles with
 * long tails (23.1317 is stored as 23.13170051574707). Gives the shortest decimal that
 * reads back as the same 32-bit float: the value of x.toPrecision(p) for the fewest
 * significant digits p in 1 … 9 with Math.fround(Number(x.toPrecision(p))) === x, so
 * 23.13170051574707 becomes 23.1317. A value that is not exactly a 32-bit float (a
 * double written as such) is returned unchanged.
 */
export function shortestFloat32(x: number): number {
  if (!Number.isFinite(x) || Math.fround(x) !== x) return x;
  if (isPowerOfTwo(x)) return linearSearch(x);
  // Whether p digits read back is monotone in p (the nearest p+1-digit decimal is at
  // least as near as the nearest p-digit one, and the float's rounding interval is
  // symmetric except at powers of two), so start at 6, where coordinates mostly are.
  let digits = 6;
  let best = Number(x.toPrecision(digits));
  if (Math.fround(best) === x) {
    for (; digits > 1; digits--) {
      const shorter = Number(x.toPrecision(digits - 1));
      if (Math.fround(shorter) !== x) break;
      best = shorter;
    }
    return best;
  }
  do best = Number(x.toPrecision(++digits));
  while (digits < 9 && Math.fround(best) !== x);
  return best;
}

function linearSearch(x: number): number {
  for (let digits = 1; digits <= 9; digits++) {
    const shorter = Number(x.toPrecision(digits));
    if (Math.fround(shorter) === x) return shorter;
  }
  return x;
}

/** Whether a float32's mantissa is all zeros (its rounding interval is lopsided). */
function isPowerOfTwo(x: number): boolean {
  view[0] = x;
  return (bits[0]! & 0x7fffff) === 0;
}
