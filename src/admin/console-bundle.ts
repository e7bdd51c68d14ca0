// The console's files, read into the program: `bun build --compile` embeds them in the
// binary, and the script is bundled here, at build time (see console-build.ts).
import { bundleConsoleScript } from "./console-build.ts" with { type: "macro" };
import page from "./console/index.html" with { type: "text" };
import style from "./console/console.css" with { type: "text" };
import icon from "./console/favicon.svg" with { type: "text" };
import chartStyle from "uplot/dist/uPlot.min.css" with { type: "text" };

export const SCRIPT: string = bundleConsoleScript();
// Bun's types describe an .html import as a page to bundle; `type: "text"` makes it the file's text.
export const PAGE = page as unknown as string;
/** uPlot's stylesheet first, so the console's own rules refine it. */
export const STYLE = `${chartStyle}\n${style}`;
export const ICON = icon;
