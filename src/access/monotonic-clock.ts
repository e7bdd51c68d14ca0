import { dlopen, FFIType, ptr } from "bun:ffi";

/**
 * Milliseconds on one clock that only moves forward (never stepped by NTP or a resumed
 * VM) and that every thread of the process reads alike: the system's CLOCK_MONOTONIC.
 *
 * The runtime offers no such clock. performance.now() is monotonic but counts from each
 * thread's own start, and so do process.hrtime() and Bun.nanoseconds(); adding
 * performance.timeOrigin, the wall clock at the thread's start, makes threads agree only
 * while the wall clock does not step between their starts (a step of a minute left one
 * thread's rate-limit buckets unable to refill). So each thread reads CLOCK_MONOTONIC once,
 * through libc, and keeps the offset from its performance.now(): afterwards a reading
 * costs what performance.now() costs. Threads then agree to within microseconds.
 *
 * Where libc cannot be opened (not Linux with glibc), the thread falls back to
 * timeOrigin + now(), the behaviour before.
 */
const CLOCK_MONOTONIC = 1;

const offsetMs = calibrate();

export function monotonicMs(): number {
  return performance.now() + offsetMs;
}

function calibrate(): number {
  let read: () => number;
  try {
    const libc = dlopen("libc.so.6", { clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } });
    const timespec = new BigInt64Array(2);
    const pointer = ptr(timespec);
    read = () => {
      if (libc.symbols.clock_gettime(CLOCK_MONOTONIC, pointer) !== 0) throw new Error("clock_gettime failed");
      return Number(timespec[0]) * 1000 + Number(timespec[1]) / 1e6;
    };
    read();
  } catch {
    return performance.timeOrigin;
  }
  // The offset from the tightest of a few readings between two performance.now()s.
  let best = Number.POSITIVE_INFINITY;
  let offset = 0;
  for (let attempt = 0; attempt < 5; attempt++) {
    const before = performance.now();
    const system = read();
    const after = performance.now();
    if (after - before < best) {
      best = after - before;
      offset = system - (before + after) / 2;
    }
  }
  return offset;
}
