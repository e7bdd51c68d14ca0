import { SQL } from "bun";

/**
 * Whether a PostgreSQL server answers at `url` within two seconds. Its own module (no
 * bun:test), so the benches can ask too.
 */
export async function postgresReachable(url: string): Promise<boolean> {
  const sql = new SQL(url, { max: 1, connectionTimeout: 2 });
  try {
    await sql`SELECT 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.close({ timeout: 0 });
  }
}
