#!/usr/bin/env bash
# Installs the Debian packages Sightline needs when they are missing, by component:
#   node  - Node.js and npm, to build the SDK and the console UI (make install)
#   test  - PostgreSQL (storage tests) and Chromium (browser tests), plus node (make test)
#   bench - wrk (HTTP load generator), plus test (make bench)
# Usage: scripts/system-deps.sh [node|test|bench]...   (default: test)
set -euo pipefail

want=()
need_node() { command -v npm >/dev/null 2>&1 || want+=(nodejs npm); }
need_test() {
  need_node
  local have_pg=""
  for dir in /usr/lib/postgresql/*/bin; do [ -x "$dir/postgres" ] && have_pg=1; done
  [ -n "$have_pg" ] || want+=(postgresql)
  command -v chromium >/dev/null 2>&1 || want+=(chromium)
}
need_bench() { need_test; command -v wrk >/dev/null 2>&1 || want+=(wrk); }

[ $# -gt 0 ] || set -- test
for component in "$@"; do
  case "$component" in
    node) need_node ;;
    test) need_test ;;
    bench) need_bench ;;
    *) echo "system-deps: unknown component '$component' (node, test, bench)" >&2; exit 2 ;;
  esac
done

[ ${#want[@]} -eq 0 ] && exit 0
mapfile -t want < <(printf '%s\n' "${want[@]}" | sort -u)

echo "system-deps: installing ${want[*]}"
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "system-deps: need root (or sudo) to install: ${want[*]}" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
