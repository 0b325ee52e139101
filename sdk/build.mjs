// Builds the SDK into the server's static files (src/sightline/web/static/sdk/):
//   src/analytics.ts          -> analytics.js           (the core script, size-budgeted)
//   src/plugins/<name>.ts     -> analytics-<name>.js    (lazily loaded by the core, e.g. recording, survey)
// Each file is written next to its target and renamed into place, so a running server never reads
// a half-written script; files of plugins that no longer exist are removed.
// The core gets two more squeezes for its 3,072-byte gzip budget (tests/sdk/test_size.py): no
// "use strict" prologue (its code does not depend on strict mode), and terser's compressor and
// mangler after esbuild (safe transforms only; it finds what esbuild leaves), ASCII output (the
// script may be read in a page's own charset).
// Every file shortens the plugin contract's names (properties ending in one "_", src/plugin.ts) the
// same way: one mangle cache for all builds, kept in mangle-cache.json so that the names stay the
// same from one build to the next (an old core still in a browser's cache meets new plugins).
import { build } from "esbuild";
import { minify } from "terser";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = join(here, "..", "src", "sightline", "web", "static", "sdk");
const pluginDir = join(here, "src", "plugins");
const plugins = existsSync(pluginDir) ? readdirSync(pluginDir).filter((name) => /^[a-z0-9-]+\.ts$/.test(name)) : [];

const entries = [[join(here, "src", "analytics.ts"), "analytics.js"]];
for (const file of plugins) entries.push([join(pluginDir, file), `analytics-${file.slice(0, -3)}.js`]);

const cacheFile = join(here, "mangle-cache.json");
const kept = existsSync(cacheFile) ? readFileSync(cacheFile, "utf8") : "{}";
let mangleCache = JSON.parse(kept);

mkdirSync(outdir, { recursive: true });
for (const [entry, name] of entries) {
  const core = name == "analytics.js";
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
    mangleProps: /[^_]_$/,
    mangleCache,
    ...(core ? { tsconfigRaw: { compilerOptions: { alwaysStrict: false, strict: false } } } : {}),
  });
  mangleCache = result.mangleCache;
  let code = result.outputFiles[0].text;
  // reduce_funcs off: inlining each function used once wraps it in a call that gzips worse.
  if (core) code = (await minify(code, { ecma: 2021, compress: { reduce_funcs: false }, format: { ascii_only: true } })).code;
  const temporary = join(outdir, `.${name}.${process.pid}.tmp`);
  writeFileSync(temporary, code);
  renameSync(temporary, join(outdir, name));
}

const sorted = JSON.stringify(Object.fromEntries(Object.entries(mangleCache).sort()), null, 2) + "\n";
if (sorted != kept) writeFileSync(cacheFile, sorted);

const wanted = new Set(entries.map(([, name]) => name));
for (const name of readdirSync(outdir)) {
  if (!wanted.has(name) && !name.endsWith(".tmp")) rmSync(join(outdir, basename(name)), { force: true });
}
