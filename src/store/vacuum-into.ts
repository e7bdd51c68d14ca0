import { openReadOnly } from "./sqlite-read-only.ts";
import type { FromWorker, ToWorker } from "../serve/messages.ts";

/**
 * Copies the SQLite file at `path` into the file `into` with VACUUM INTO: one snapshot,
 * read while writers carry on. `into` may exist empty (its mode is kept). The file
 * copied is only read: nothing in it or beside it changes (see openReadOnly).
 */
export function vacuumInto(path: string, into: string): void {
  const file = openReadOnly(path);
  try {
    file.db.run("PRAGMA busy_timeout = 10000");
    file.db.query("VACUUM INTO ?1").run(into);
    file.checkUnchanged();
  } finally {
    file.db.close();
  }
}

/**
 * vacuumInto on a thread of its own (`workerEntry`, the program's worker module): the
 * statement holds its thread until the copy is done, and this thread stays free to
 * handle a signal meanwhile. Rejects with the thread's error (and its SQLite code).
 */
export async function vacuumIntoOnThread(workerEntry: string, path: string, into: string): Promise<void> {
  const worker = new Worker(workerEntry);
  try {
    await new Promise<void>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<FromWorker>) => {
        const message = event.data;
        if (message.type === "copied") resolve();
        else if (message.type === "failed") reject(Object.assign(new Error(message.error), { code: message.code }));
      };
      worker.onerror = (event) => reject(new Error(event.message));
      worker.postMessage({ type: "vacuum-into", path, into } satisfies ToWorker);
    });
  } finally {
    worker.terminate();
  }
}
