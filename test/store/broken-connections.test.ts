import { expect, test } from "bun:test";
import { readPastBrokenConnections } from "../../src/store/broken-connections.ts";

/** A statement that fails with `errors` in turn, then answers `answer`; counts its tries. */
function statement(errors: unknown[], answer = "rows") {
  let tries = 0;
  return {
    run: async () => {
      const error = errors[tries++];
      if (error !== undefined) throw error;
      return answer;
    },
    tries: () => tries,
  };
}

const ended = Object.assign(new Error("terminating connection due to administrator command"), { errno: "57P01" });
const closed = Object.assign(new Error("Connection closed"), { code: "ERR_POSTGRES_CONNECTION_CLOSED" });
const lost = Object.assign(new Error("connection failure"), { errno: "08006" });

test("a read that meets every connection of the pool broken, one after another, answers from a new one", async () => {
  const read = statement([ended, ended, closed, lost, ended]);
  expect(await readPastBrokenConnections(read.run, 5)).toBe("rows");
  expect(read.tries()).toBe(6);
});

test("a session the server ended for a transaction left idle (25P03) is a broken connection too: the read answers from another", async () => {
  const idle = Object.assign(new Error("terminating connection due to idle-in-transaction timeout"), { errno: "25P03" });
  const read = statement([idle]);
  expect(await readPastBrokenConnections(read.run, 5)).toBe("rows");
  expect(read.tries()).toBe(2);
});

test("more broken connections than the pool holds: the last error is the caller's", async () => {
  const read = statement(Array(6).fill(ended));
  await expect(readPastBrokenConnections(read.run, 5)).rejects.toBe(ended);
  expect(read.tries()).toBe(6);
});

test("any other error is thrown at once, never tried again", async () => {
  const wrong = Object.assign(new Error("syntax error"), { errno: "42601" });
  const timedOut = Object.assign(new Error("canceling statement due to statement timeout"), { errno: "57014" });
  for (const error of [wrong, timedOut, new Error("no code")]) {
    const read = statement([error]);
    await expect(readPastBrokenConnections(read.run, 5)).rejects.toBe(error);
    expect(read.tries()).toBe(1);
  }
});
