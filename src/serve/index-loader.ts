import { RangeIndex } from "../index/range-index.ts";
import { LoaderUnavailableError, type IndexLoader } from "../index/live-index.ts";
import { descriptorsFree } from "../metrics/process-descriptors.ts";
import type { FromWorker, ToWorker } from "./messages.ts";

/**
 * A server's IndexLoader: each load of the data file, and the AS index of the data
 * loaded at start, on a thread of its own (worker-thread.ts as a loader), started for
 * the job and ended with it, so the main thread keeps answering and polling the state
 * store meanwhile, and the memory the load works in goes with the thread. What comes
 * back is the image, in SharedArrayBuffers: the same memory, not a copy, which the
 * main thread then hands to the worker threads as before.
 */
export function offThreadLoader(workerEntry: string): IndexLoader {
  return {
    async load(path, signal) {
      const loaded = await runLoader(workerEntry, { type: "load-index", path }, "index-loaded", signal);
      return RangeIndex.fromImage(loaded.image);
    },
    async buildAsn(index, signal) {
      if (index.image.asn !== undefined) return;
      const built = await runLoader(workerEntry, { type: "build-asn", image: index.image }, "asn-built", signal);
      // An AS request on this thread may have built it meanwhile (asnIndexOf): that one stays.
      index.image.asn ??= built.asn;
    },
  };
}

/**
 * The descriptors a loader thread is started with at least free. Starting a thread takes
 * a few (its event loop's, the modules it reads), and Bun ends the whole process when
 * it finds none, which a server holding idle connections up to its limit would meet on
 * every reload. 32 is far more than a start takes, and nothing beside a limit in the
 * hundreds of thousands.
 */
export const LOADER_DESCRIPTORS = 32;

/**
 * Starts a loader thread with one job and resolves with its answer; rejects with its
 * error, when the thread ends without one, or when `signal` aborts (the thread is ended
 * then, so a stopping server does not wait for it).
 */
async function runLoader<Type extends "index-loaded" | "asn-built">(
  workerEntry: string,
  job: ToWorker,
  answer: Type,
  signal?: AbortSignal,
): Promise<Extract<FromWorker, { type: Type }>> {
  if (signal?.aborted) throw new Error("stopped before the loader thread started");
  const free = descriptorsFree();
  if (free !== null && free < LOADER_DESCRIPTORS) {
    throw new LoaderUnavailableError(`too few file descriptors are free to start a loader thread (${free}; it takes ${LOADER_DESCRIPTORS}); connections hold the rest`);
  }
  const worker = new Worker(workerEntry);
  let onAbort = () => {};
  try {
    return await new Promise((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<FromWorker>) => {
        const message = event.data;
        if (message.type === answer) resolve(message as Extract<FromWorker, { type: Type }>);
        else if (message.type === "failed") reject(new Error(message.error));
      };
      worker.onerror = (event) => reject(new Error(`the loader thread failed: ${event.message}`));
      // Settled already when it ends after its answer; otherwise the job was lost with it.
      worker.addEventListener("close", () => reject(new Error("the loader thread ended without an answer")));
      onAbort = () => reject(new Error("stopped while the loader thread worked"));
      signal?.addEventListener("abort", onAbort);
      worker.postMessage(job);
    });
  } finally {
    signal?.removeEventListener("abort", onAbort);
    worker.terminate();
  }
}
