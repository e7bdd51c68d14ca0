import { Database } from "bun:sqlite";
import { SQL } from "bun";

/**
 * Changes made to a state behind its stores' backs, on a connection of the test's own,
 * as an operator's sqlite3 or psql would make them.
 */
export interface RawChanges {
  /** Deletes a key with its units and its use per day, in one transaction. */
  deleteKey(location: string, keyId: string): Promise<void>;
  /** From now on, every insert into `table` fails with "`table` refused" (a trigger); with `keyId`, only its rows'. */
  refuseInserts(location: string, table: "audit_log" | "webhook_events" | "usage_days", keyId?: string): Promise<void>;
}

export const sqliteRawChanges: RawChanges = {
  async deleteKey(path, keyId) {
    const db = new Database(path);
    try {
      db.transaction(() => {
        for (const table of ["usage_days", "usage"]) db.query(`DELETE FROM ${table} WHERE key_id = ?1`).run(keyId);
        db.query("DELETE FROM keys WHERE id = ?1").run(keyId);
      }).immediate();
    } finally {
      db.close();
    }
  },
  async refuseInserts(path, table, keyId) {
    const db = new Database(path);
    const when = keyId === undefined ? "" : ` WHEN NEW.key_id = '${keyId}'`;
    db.run(`CREATE TRIGGER refuse_${table} BEFORE INSERT ON ${table}${when} BEGIN SELECT RAISE(ABORT, '${table} refused'); END`);
    db.close();
  },
};

export const postgresRawChanges: RawChanges = {
  async deleteKey(url, keyId) {
    const sql = new SQL(url, { max: 1 });
    try {
      await sql.begin(async (tx) => {
        await tx`DELETE FROM usage_days WHERE key_id = ${keyId}`;
        await tx`DELETE FROM usage WHERE key_id = ${keyId}`;
        await tx`DELETE FROM keys WHERE id = ${keyId}`;
      });
    } finally {
      await sql.close();
    }
  },
  async refuseInserts(url, table, keyId) {
    const sql = new SQL(url, { max: 1 });
    const when = keyId === undefined ? "" : ` WHEN (NEW.key_id = '${keyId}')`;
    await sql.unsafe(`CREATE FUNCTION refuse_${table}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '${table} refused'; END $$`);
    await sql.unsafe(`CREATE TRIGGER refuse_${table} BEFORE INSERT ON ${table} FOR EACH ROW${when} EXECUTE FUNCTION refuse_${table}()`);
    await sql.close();
  },
};
