// A thread that reads the monotonic clock when the test thread lets it (see monotonic-clock.test.ts).
import { monotonicMs } from "../../src/access/monotonic-clock.ts";

declare const self: Worker;
self.onmessage = (event: MessageEvent<SharedArrayBuffer>) => {
  const reading = new Float64Array(event.data, 0, 1);
  const go = new Int32Array(event.data, 8, 1);
  postMessage("ready");
  Atomics.wait(go, 0, 0);
  reading[0] = monotonicMs();
  postMessage("done");
};
