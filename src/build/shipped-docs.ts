/**
 * The documentation the tarball and the .deb ship beside the binary, as paths relative
 * to the checkout, which both keep relative to each other: the README, the guides in
 * docs/, and the hosting list (data/hosting-asns.csv) that the README and the guides
 * link to. A link in a shipped guide to a file outside this list would break where it
 * is installed (test/build/packaging.test.ts checks every one).
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export function shippedDocs(root: string): string[] {
  const guides = readdirSync(join(root, "docs"))
    .filter((name) => statSync(join(root, "docs", name)).isFile())
    .map((name) => `docs/${name}`);
  return ["README.md", ...guides, "data/hosting-asns.csv"].sort();
}
