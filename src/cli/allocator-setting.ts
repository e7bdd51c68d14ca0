import { FFIType, ptr } from "bun:ffi";
import { openLibc } from "./libc.ts";

/**
 * The allocator setting a server runs with. Bun allocates with mimalloc, which by
 * default hands freed memory back to the kernel ("purges" it, with madvise) 10 ms after
 * it is freed: under load that is a system call, and on a VM a TLB-flushing hypercall,
 * for memory that the next requests allocate again. `MIMALLOC_PURGE_DELAY=1000` keeps
 * freed memory for a second first, long enough to be reused under load, short enough
 * that an idle server gives it back. Measured on `serve` (one worker, paired runs
 * against the same server at mimalloc's default): batches of 1,000 and of 100 1.9–2.1×
 * the requests a second, at half the CPU a request; single lookups about the same (0.98
 * the rate, 1.00 the CPU, in 21 pairs).
 * `-1` (never purge) bought single lookups 0.85–0.88 of the CPU a request more, but a
 * process then holds its peak for good: resident size after load 218–276 MiB against
 * about 100, past the 150 MB the bench holds serve to. See docs/performance.md.
 *
 * mimalloc reads the setting once, as the process starts, from its environment, so
 * setting it later does nothing: `serve` started without it runs itself again with it
 * (execve: the same process id, open files and arguments), before anything else loads.
 * An operator's own value (`-1` for the speed above at the cost of memory, `10` for
 * mimalloc's default) is kept as it is.
 */
export const PURGE_DELAY_VARIABLE = "MIMALLOC_PURGE_DELAY";
export const SERVE_PURGE_DELAY = "1000";

/**
 * For `serve` without MIMALLOC_PURGE_DELAY: replaces this process with the same command
 * and the setting. Returns only if it did not (another command, the variable already
 * set, or execve unavailable), and then the program goes on as it is.
 *
 * @param command how this program is run: the executable, then, from source, the runtime's own flags and the script
 */
export function runServeWithAllocatorSetting(command: readonly string[], argv: readonly string[] = process.argv): void {
  if (argv[2] !== "serve" || process.env[PURGE_DELAY_VARIABLE] !== undefined) return;
  const environment = Object.entries({ ...process.env, [PURGE_DELAY_VARIABLE]: SERVE_PURGE_DELAY }).map(([name, value]) => `${name}=${value ?? ""}`);
  execve(command[0]!, [...command, ...argv.slice(2)], environment);
}

const SIGHUP = 1;
const SIG_IGN = 1;

/**
 * execve(2) through libc; returns only when it fails.
 *
 * SIGHUP is ignored across it: an ignored signal stays ignored in the new program (an
 * ignored disposition is kept by execve, and is the whole process's, its runtime's
 * threads included) until it listens for the signal itself (startup-signals.ts), as
 * CONTRACT §12 asks of a SIGHUP before the data is loaded; without this, one that
 * arrived while the new runtime was starting would end the process. SIGTERM and SIGINT
 * cannot be treated so (ignored, they would be lost, and blocking does not hold: the
 * runtime starts threads that unblock every signal), so one of those in that window
 * ends the process as it would before the first program starts.
 */
function execve(path: string, args: readonly string[], environment: readonly string[]): void {
  const libc = openLibc({
    execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
    signal: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.ptr },
  });
  if (!libc) return;
  // NUL-terminated strings, and NULL-terminated arrays of pointers to them; every buffer
  // stays referenced here until the call.
  const text = (value: string) => Buffer.from(`${value}\0`);
  const pointers = (values: readonly Buffer[]) => BigUint64Array.from([...values.map((value) => BigInt(ptr(value))), 0n]);
  const file = text(path);
  const argStrings = args.map(text);
  const envStrings = environment.map(text);
  const argPointers = pointers(argStrings);
  const envPointers = pointers(envStrings);
  const previous = libc.symbols.signal(SIGHUP, SIG_IGN);
  libc.symbols.execve(ptr(file), ptr(argPointers), ptr(envPointers));
  libc.symbols.signal(SIGHUP, previous);
  libc.close();
}
