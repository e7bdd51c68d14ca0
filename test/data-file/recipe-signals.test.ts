import { expect, test } from "bun:test";
import { parseRecipe, recipeText, type Recipe } from "../../src/data-file/recipe.ts";

const file = { location: "https://check.torproject.org/torbulkexitlist", fetched: { url: "https://check.torproject.org/torbulkexitlist", size: 20, sha256: "ab".repeat(32) } };

test("a recipe keeps a feed's --signal and --service, and reads them back", () => {
  const recipe: Recipe = { version: 1, base: null, sources: [{ describe: { name: "Tor exit list" }, signal: "tor", files: [file] }, { describe: {}, signal: "relay", service: "iCloud Private Relay", files: [file] }] };
  expect(parseRecipe(recipeText(recipe), "data.db")).toEqual(recipe);
});

test.each([
  [{ signal: "anonymous" }, "a source's signal is malformed"],
  [{ signal: 4 }, "a source's signal is malformed"],
  [{ service: ["x"] }, "a source's service is malformed"],
])("a recorded feed option that iplookup does not write is refused: %p", (extra, message) => {
  const text = JSON.stringify({ version: 1, base: null, sources: [{ describe: {}, ...extra, files: [file] }] });
  expect(() => parseRecipe(text, "data.db")).toThrow(`the recipe recorded in data.db cannot be read: ${message}`);
});
