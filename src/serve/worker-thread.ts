/**
 * The entry of a server's other threads. Most are worker threads of `serve --workers N`:
 * one serves on the shared port until the main thread says stop. Its log lines go to the
 * main thread, which writes every thread's logs; the data index arrives as a shared
 * image and is swapped when the main thread reloads it. One, on a SQLite state file,
 * runs the WAL's checkpoints instead (see wal-checkpoints.ts), and loads nothing else;
 * so does `backup`'s, which copies a state file (see vacuum-into.ts), and a loader,
 * which loads a data file or builds an AS index for the main thread and is done (see
 * index-loader.ts). On every server one thread runs the webhook deliveries and the
 * key.expiring sweep (see events.ts), its log lines and attempts sent to the main thread.
 */
import type { RangeIndex } from "../index/range-index.ts";
import { lineBuffer } from "../log/line-buffer.ts";
import type { WalCheckpoints } from "../store/wal-checkpoints.ts";
import type { ServeEvents } from "./events.ts";
import type { FromWorker, ToWorker } from "./messages.ts";
import type { ServingThread } from "./serving-thread.ts";

declare const self: Worker;

const send = (message: FromWorker) => self.postMessage(message);
/** What a job that threw answers: its message, and the system error's code (EADDRINUSE, …) when it has one. */
const failure = (error: unknown): FromWorker => ({ type: "failed", error: (error as Error)?.message ?? String(error), code: (error as { code?: string })?.code });
let index: RangeIndex | undefined;
/** RangeIndex.fromImage, once a serving thread has loaded it. */
let indexFromImage: ((image: RangeIndex["image"]) => RangeIndex) | undefined;
let serving: ServingThread | undefined;
let checkpoints: WalCheckpoints | undefined;
let events: ServeEvents | undefined;
const logLines = lineBuffer((text) => send({ type: "log", text }));

self.onmessage = async (event: MessageEvent<ToWorker>) => {
  const message = event.data;
  switch (message.type) {
    case "start": {
      const { setup } = message;
      const [{ RangeIndex }, { createLogger }, { startServingThread }] = await Promise.all([
        import("../index/range-index.ts"),
        import("../log/logger.ts"),
        import("./serving-thread.ts"),
      ]);
      indexFromImage = (image) => RangeIndex.fromImage(image);
      index = indexFromImage(setup.image);
      const logger = createLogger(setup.config.logLevel, logLines.write, () => new Date(), setup.journal);
      try {
        serving = await startServingThread(setup, () => index as RangeIndex, logger, () => new Date());
        send({ type: "listening" });
      } catch (error) {
        send(failure(error));
      }
      return;
    }
    case "checkpoints": {
      const { runWalCheckpoints } = await import("../store/wal-checkpoints.ts");
      try {
        checkpoints = runWalCheckpoints(message.path, message.intervalMs, (error) => send({ type: "checkpoint-failed", error: String((error as Error)?.message ?? error) }), {
          onRun: (stats, walBytes) => send({ type: "checkpoint-stats", stats: { ...stats }, walBytes }),
        });
        send({ type: "listening" });
      } catch (error) {
        send(failure(error));
      }
      return;
    }
    case "events": {
      const [{ createLogger }, { startServeEvents }] = await Promise.all([import("../log/logger.ts"), import("./events.ts")]);
      const logger = createLogger(message.logLevel, logLines.write, () => new Date(), message.journal);
      try {
        events = await startServeEvents({ statePath: message.statePath, logger, now: () => new Date(), onAttempt: (state) => send({ type: "webhook-attempt", state }) });
        send({ type: "listening" });
      } catch (error) {
        send(failure(error));
      }
      return;
    }
    case "vacuum-into": {
      const { vacuumInto } = await import("../store/vacuum-into.ts");
      try {
        vacuumInto(message.path, message.into);
        send({ type: "copied" });
      } catch (error) {
        send(failure(error));
      }
      return;
    }
    case "load-index": {
      const { openWithAsnIndex } = await import("../index/live-index.ts");
      try {
        send({ type: "index-loaded", image: openWithAsnIndex(message.path).image });
      } catch (error) {
        send(failure(error));
      }
      return;
    }
    case "build-asn": {
      const { buildAsnImage } = await import("../asn/asn-image.ts");
      try {
        send({ type: "asn-built", asn: buildAsnImage(message.image) });
      } catch (error) {
        send(failure(error));
      }
      return;
    }
    case "index":
      // Sent only to a thread that listens, so after its start.
      index = indexFromImage?.(message.image);
      return;
    case "tls":
      serving?.relisten(message.tls);
      return;
    case "stop":
      try {
        await Promise.all([serving?.stop(), events?.stop()]);
        checkpoints?.stop();
      } finally {
        logLines.flush();
        send({ type: "stopped" });
      }
      return;
  }
};
