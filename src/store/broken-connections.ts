import { sqlstateOf } from "./postgres-unavailable.ts";

/**
 * A connection that was already dead, or died under the statement (the server restarted,
 * failed over, or ended it, 25P03 included: a transaction left idle past the pool's
 * limit): a pool holds such connections until it next uses them.
 */
function isBrokenConnection(error: unknown): boolean {
  if ((error as { code?: unknown } | null | undefined)?.code === "ERR_POSTGRES_CONNECTION_CLOSED") return true;
  const sqlstate = sqlstateOf(error);
  return sqlstate !== undefined && (sqlstate.startsWith("08") || ["57P01", "57P02", "57P03", "25P03"].includes(sqlstate));
}

/**
 * Runs a statement that only reads, again on each broken connection it meets (reading
 * twice does no harm; a write is never run twice: a COMMIT cut off may have committed).
 * A database that restarts, or ends its connections (pg_terminate_backend, a failover),
 * leaves every connection of a pool broken at once, and the pool may hand out each
 * before it notices: so up to `poolSize` tries more, after which the error is the
 * caller's. Any other error is thrown at once.
 */
export async function readPastBrokenConnections<T>(work: () => Promise<T>, poolSize: number): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await work();
    } catch (error) {
      if (!isBrokenConnection(error) || tries > poolSize) throw error;
    }
  }
}
