// Builds the console into src/sightline/web/static/console/ (served at /static/console/).
//   app.js (+ chunk-*.js)  the single-page application, an ES module; sections may lazy-load chunks
//   theme.js               applies the remembered theme before the first paint (loaded in <head>)
//   setup.js               the first-run setup page, independent of the application
//   console.css            every style of the console and the setup page
//   favicon.svg            copied from public/
//   manifest.json          {"preload": [...]}: the chunks app.js imports statically, which the
//                          server names as <link rel="modulepreload"> so they load in parallel
//   <name>.gz              gzip -9 of each text file above (when smaller), compressed once here;
//                          the server sends it to browsers that accept gzip (web/assets.py)
// `node build.mjs --watch` rebuilds on change.
import * as esbuild from "esbuild";
import { cpSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, extname } from "node:path";
import { fileURLToPath } from "node:url";
import { constants, gzipSync } from "node:zlib";

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

/** Writes manifest.json: every chunk reached from app.js by static imports (not lazy ones). */
const manifest = {
  name: "manifest",
  setup(build) {
    build.onEnd((result) => {
      if (!result.metafile) return;
      const outputs = result.metafile.outputs;
      const entry = Object.keys(outputs).find((key) => outputs[key].entryPoint === "src/app.tsx");
      const preload = new Set();
      const visit = (key) => {
        for (const item of outputs[key]?.imports ?? []) {
          if (item.kind !== "import-statement" || preload.has(item.path)) continue;
          preload.add(item.path);
          visit(item.path);
        }
      };
      if (entry) visit(entry);
      const names = [...preload].map((path) => basename(path)).sort();
      writeFileSync(`${outdir}manifest.json`, `${JSON.stringify({ preload: names })}\n`);
    });
  },
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
    metafile: true,
    plugins: [manifest],
  },
  { ...common, entryPoints: { theme: "src/theme-init.ts", setup: "src/setup.ts" }, format: "iife" },
  { ...common, entryPoints: { console: "src/styles/console.css" } },
];

const COMPRESSIBLE = new Set([".js", ".css", ".svg"]);

/** Writes <name>.gz beside each text file of the build, when gzip makes it smaller. */
function precompress() {
  for (const name of readdirSync(outdir)) {
    if (!COMPRESSIBLE.has(extname(name))) continue;
    const raw = readFileSync(`${outdir}${name}`);
    const packed = gzipSync(raw, { level: constants.Z_BEST_COMPRESSION });
    if (packed.length < raw.length) writeFileSync(`${outdir}${name}.gz`, packed);
  }
}

rmSync(outdir, { recursive: true, force: true });
cpSync(fileURLToPath(new URL("public/", import.meta.url)), outdir, { recursive: true });
if (watch) {
  for (const options of builds) await (await esbuild.context(options)).watch();
  console.log(`watching; writing to ${outdir}`);
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
  precompress();
}
