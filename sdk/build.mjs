// Builds the SDK into the server's static files (src/sightline/web/static/sdk/):
//   src/analytics.ts          -> analytics.js           (the core script, size-budgeted)
//   src/plugins/<name>.ts     -> analytics-<name>.js    (lazily loaded by the core, e.g. recording, survey)
// The output directory holds build output only and is recreated on every build.
import { build } from "esbuild";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = join(here, "..", "src", "sightline", "web", "static", "sdk");
const pluginDir = join(here, "src", "plugins");
const plugins = existsSync(pluginDir) ? readdirSync(pluginDir).filter((name) => /^[a-z0-9-]+\.ts$/.test(name)) : [];

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });

const common = {
  bundle: true,
  minify: true,
  format: "iife",
  target: ["es2021", "chrome91", "firefox90", "safari15"],
  legalComments: "none",
  logLevel: "warning",
};

await build({ ...common, entryPoints: [join(here, "src", "analytics.ts")], outfile: join(outdir, "analytics.js") });
for (const file of plugins) {
  const name = file.slice(0, -3);
  await build({ ...common, entryPoints: [join(here, "src", "plugins", file)], outfile: join(outdir, `analytics-${name}.js`) });
}
