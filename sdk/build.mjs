// Builds the SDK into the server's static files (src/sightline/web/static/sdk/):
//   src/analytics.ts          -> analytics.js           (the core script, size-budgeted)
//   src/plugins/<name>.ts     -> analytics-<name>.js    (lazily loaded by the core, e.g. recording, survey)
// Each file is written next to its target and renamed into place, so a running server never reads
// a half-written script; files of plugins that no longer exist are removed.
import { build } from "esbuild";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = join(here, "..", "src", "sightline", "web", "static", "sdk");
const pluginDir = join(here, "src", "plugins");
const plugins = existsSync(pluginDir) ? readdirSync(pluginDir).filter((name) => /^[a-z0-9-]+\.ts$/.test(name)) : [];

const entries = [[join(here, "src", "analytics.ts"), "analytics.js"]];
for (const file of plugins) entries.push([join(pluginDir, file), `analytics-${file.slice(0, -3)}.js`]);

mkdirSync(outdir, { recursive: true });
for (const [entry, name] of entries) {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: "iife",
    target: ["es2021", "chrome91", "firefox90", "safari15"],
    legalComments: "none",
    logLevel: "warning",
    write: false,
    outfile: join(outdir, name),
  });
  const temporary = join(outdir, `.${name}.${process.pid}.tmp`);
  writeFileSync(temporary, result.outputFiles[0].contents);
  renameSync(temporary, join(outdir, name));
}

const wanted = new Set(entries.map(([, name]) => name));
for (const name of readdirSync(outdir)) {
  if (!wanted.has(name) && !name.endsWith(".tmp")) rmSync(join(outdir, basename(name)), { force: true });
}
