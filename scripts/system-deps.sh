#!/usr/bin/env bash
# Installs the Debian packages the tests and benchmarks need when they are missing:
# PostgreSQL (storage tests), Chromium (browser tests), wrk (benchmarks), Node.js/npm (SDK build).
set -euo pipefail

want=()
have_pg=""
for dir in /usr/lib/postgresql/*/bin; do [ -x "$dir/postgres" ] && have_pg=1; done
[ -n "$have_pg" ] || want+=(postgresql)
command -v chromium >/dev/null 2>&1 || want+=(chromium)
for tool in "$@"; do
  case "$tool" in
    wrk) command -v wrk >/dev/null 2>&1 || want+=(wrk) ;;
  esac
done
command -v npm >/dev/null 2>&1 || want+=(nodejs npm)

[ ${#want[@]} -eq 0 ] && exit 0

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
