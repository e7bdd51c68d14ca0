/**
 * The entry of a worker thread of `serve --workers N`: it serves on the shared port
 * until the main thread says stop. Its log lines go to the main thread, which writes
 * every thread's logs; the data index arrives as a shared image and is swapped when the
 * main thread reloads it.
 */
import { RangeIndex } from "../index/range-index.ts";
import { lineBuffer } from "../log/line-buffer.ts";
import { createLogger } from "../log/logger.ts";
import type { FromWorker, ToWorker } from "./messages.ts";
import { startServingThread, type ServingThread } from "./serving-thread.ts";

declare const self: Worker;

const send = (message: FromWorker) => self.postMessage(message);
let index: RangeIndex | undefined;
let serving: ServingThread | undefined;
const logLines = lineBuffer((text) => send({ type: "log", text }));

self.onmessage = async (event: MessageEvent<ToWorker>) => {
  const message = event.data;
  switch (message.type) {
    case "start": {
      const { setup } = message;
      index = RangeIndex.fromImage(setup.image);
      const logger = createLogger(setup.config.logLevel, logLines.write);
      try {
        serving = await startServingThread(setup, () => index as RangeIndex, logger, () => new Date());
        send({ type: "listening" });
      } catch (error) {
        send({ type: "failed", error: (error as Error)?.message ?? String(error), code: (error as { code?: string })?.code });
      }
      return;
    }
    case "index":
      index = RangeIndex.fromImage(message.image);
      return;
    case "tls":
      serving?.relisten(message.tls);
      return;
    case "stop":
      try {
        await serving?.stop();
      } finally {
        logLines.flush();
        send({ type: "stopped" });
      }
      return;
  }
};
