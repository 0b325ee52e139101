// Builds the console into src/sightline/web/static/console/ (served at /static/console/).
//   app.js (+ chunk-*.js)  the single-page application, an ES module; sections may lazy-load chunks
//   theme.js               applies the remembered theme before the first paint (loaded in <head>)
//   setup.js               the first-run setup page, independent of the application
//   console.css            every style of the console and the setup page
//   favicon.svg            copied from public/
// `node build.mjs --watch` rebuilds on change.
import * as esbuild from "esbuild";
import { cpSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const outdir = fileURLToPath(new URL("../src/sightline/web/static/console/", import.meta.url));
const watch = process.argv.includes("--watch");

const common = {
  bundle: true,
  minify: !watch,
  sourcemap: watch ? "inline" : false,
  target: ["chrome123", "firefox120", "safari17.5"],
  legalComments: "none",
  logLevel: "warning",
  outdir,
};

const builds = [
  {
    ...common,
    entryPoints: { app: "src/app.tsx" },
    format: "esm",
    splitting: true,
    chunkNames: "chunk-[hash]",
    jsx: "automatic",
    jsxImportSource: "preact",
  },
  { ...common, entryPoints: { theme: "src/theme-init.ts", setup: "src/setup.ts" }, format: "iife" },
  { ...common, entryPoints: { console: "src/styles/console.css" } },
];

rmSync(outdir, { recursive: true, force: true });
cpSync(fileURLToPath(new URL("public/", import.meta.url)), outdir, { recursive: true });
if (watch) {
  for (const options of builds) await (await esbuild.context(options)).watch();
  console.log(`watching; writing to ${outdir}`);
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
