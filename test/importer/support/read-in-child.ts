import { join } from "node:path";

/** What reading a file in a child process ended with (see read-source-child.ts). */
export interface ChildRead {
  /** The error's message, or null when the file was read. */
  readonly error: string | null;
  readonly maxRssBytes: number;
}

/** Reads `file` (in `format`, else detected) in a child process. */
export async function readInChild(file: string, format?: string): Promise<ChildRead> {
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "read-source-child.ts"), file, ...(format === undefined ? [] : [format])], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`the child reading ${file} exited with ${code}: ${err}`);
  return JSON.parse(out) as ChildRead;
}
