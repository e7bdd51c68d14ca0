/**
 * The client closed its connection before its units were committed: nothing was charged,
 * and no answer will reach it. The access log and the metrics record the request with
 * status 499 (the code proxies use for "client closed request").
 */
export class ClientGoneError extends Error {
  override readonly name = "ClientGoneError";
  constructor() {
    super("the client closed the connection before the answer; nothing was charged");
  }
}

/** The status an answer to a client that has gone is recorded with. */
export const CLIENT_GONE_STATUS = 499;
