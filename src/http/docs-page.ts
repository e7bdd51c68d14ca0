import { openApiDocument } from "./openapi.ts";

const escape = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");

/**
 * /docs: the OpenAPI document as one self-contained HTML page (no scripts, no fonts, no
 * CDN), so it works on a host without internet access.
 */
export function docsPage(version: string): string {
  const doc = openApiDocument(version);
  const sections = Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.entries(operations as Record<string, { summary?: string; description?: string; requestBody?: unknown; responses?: Record<string, { description?: string }> }>).map(
      ([method, operation]) => `
<section>
  <h2><code>${method.toUpperCase()} ${escape(path)}</code></h2>
  <p>${escape(operation.summary ?? "")}${operation.description ? ` ${escape(operation.description)}` : ""}</p>
  <ul>${Object.entries(operation.responses ?? {})
    .map(([status, response]) => `<li><b>${status}</b> ${escape(response.description ?? "")}</li>`)
    .join("")}</ul>
</section>`,
    ),
  );
  const schemas = Object.entries(doc.components.schemas)
    .map(([name, schema]) => `<h3 id="${name}">${name}</h3><pre>${escape(JSON.stringify(schema, null, 2))}</pre>`)
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>iplookup API ${escape(version)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem}pre{background:#f4f4f4;padding:.75rem;overflow:auto}code{font-size:.95em}</style>
</head><body>
<h1>iplookup API <small>${escape(version)}</small></h1>
<p>${escape(doc.info.description)} Every <code>/v1</code> request needs <code>Authorization: Bearer &lt;key&gt;</code>. The machine-readable document is <a href="/openapi.json">/openapi.json</a>.</p>
${sections.join("\n")}
<h2>Schemas</h2>
${schemas}
</body></html>`;
}
