import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sendNotification, serviceNotifier, socketAddress } from "../../src/cli/service-notify.ts";
import { bindNotifySocket } from "../support/notify-socket.ts";
import { startServerProcess } from "../support/server-process.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-notify-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("socketAddress: struct sockaddr_un as sd_notify(3) builds it", () => {
  test("a path: the family, the path's bytes, a NUL", () => {
    const address = socketAddress("/run/systemd/notify")!;
    expect(address.readUInt16LE(0)).toBe(1);
    expect(address.subarray(2).toString("latin1")).toBe("/run/systemd/notify\0");
  });

  test("an abstract name (@name): the family, a NUL, the name, and no NUL after it", () => {
    const address = socketAddress("@/org/freedesktop/systemd1/notify/123")!;
    expect(address.readUInt16LE(0)).toBe(1);
    expect(address.subarray(2).toString("latin1")).toBe("\0/org/freedesktop/systemd1/notify/123");
  });

  test.each(["", "relative/path", "@", `/${"x".repeat(107)}`, "/a\0b"])("refused: %p", (text) => {
    expect(socketAddress(text)).toBeNull();
  });
});

describe("sendNotification", () => {
  test("one datagram to a bound path, and one to an abstract name", async () => {
    for (const socketPath of [join(dir, "path.sock"), `@iplookup-test-${process.pid}`]) {
      const socket = bindNotifySocket(socketPath);
      try {
        expect(sendNotification(socketPath, "READY=1")).toBeNull();
        expect(sendNotification(socketPath, "STOPPING=1")).toBeNull();
        expect(await socket.waitFor("STOPPING=1")).toBe(true);
        expect(socket.messages()).toEqual(["READY=1", "STOPPING=1"]);
      } finally {
        socket.close();
      }
    }
  });

  test("a socket nobody listens on, or text that is no socket: said, never thrown", () => {
    expect(sendNotification(join(dir, "absent.sock"), "READY=1")).toContain("was not sent");
    expect(sendNotification("relative.sock", "READY=1")).toContain("not a unix socket's path");
    const errors: string[] = [];
    serviceNotifier({ NOTIFY_SOCKET: join(dir, "absent.sock") }, (error) => errors.push(error)).ready();
    expect(errors).toEqual([`telling systemd READY=1 failed: the datagram to ${join(dir, "absent.sock")} was not sent`]);
  });

  test("without NOTIFY_SOCKET nothing is sent and nothing is said", () => {
    const errors: string[] = [];
    const notifier = serviceNotifier({}, (error) => errors.push(error));
    notifier.ready();
    notifier.stopping();
    expect(errors).toEqual([]);
  });
});

test("serve under a service manager: READY=1 once the port answers, STOPPING=1 when told to stop", async () => {
  const socketPath = join(dir, "serve.sock");
  const socket = bindNotifySocket(socketPath);
  const server = await startServerProcess(["--state", join(dir, "state.db"), "--admin-port", "off"], { env: { NOTIFY_SOCKET: socketPath } });
  try {
    expect(await socket.waitFor("READY=1")).toBe(true);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(socket.messages()).toEqual(["READY=1"]);
    expect(await server.stop("SIGTERM")).toBe(0);
    expect(socket.messages()).toEqual(["READY=1", "STOPPING=1"]);
    expect(server.stderr()).not.toContain("telling systemd");
  } finally {
    await server.stop("SIGKILL");
    socket.close();
  }
});
