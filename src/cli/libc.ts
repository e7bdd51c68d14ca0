import { dlopen, type FFIFunction } from "bun:ffi";

/**
 * The C library's functions named in `symbols`, or null where it cannot be opened (a
 * system without glibc's libc.so.6): callers then go on without what they wanted of it.
 */
export function openLibc<Symbols extends Record<string, FFIFunction>>(symbols: Symbols) {
  try {
    return dlopen("libc.so.6", symbols);
  } catch {
    return null;
  }
}
