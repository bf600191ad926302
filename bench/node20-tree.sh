#!/usr/bin/env bash
# Prints the path of a copy of this repository whose node_modules run on Node 20 (Debian's
# /usr/bin/node, or NODE20=<binary>), made once per lockfile and kept in the cache: for the
# bench to run the same servers on Node 20 beside Node 24 (bench/runtimes.ts). On Node 20
# better-sqlite3 13 crashes (it needs Node 22 or newer), so the copy builds 12.11.1 against
# Node 20's headers (Debian's in /usr/include/node), without downloading anything else.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
node20="${NODE20:-/usr/bin/node}"
[ "$("$node20" -p 'process.versions.node.split(".")[0]')" = 20 ] || { echo "bench/node20-tree.sh: $node20 is not Node 20; set NODE20" >&2; exit 2; }
key="$(cat "$repo/package-lock.json" | sha256sum | cut -c1-16)"
tree="${XDG_CACHE_HOME:-$HOME/.cache}/audio-share/bench-node20-$key"
if [ ! -f "$tree/.ready" ]; then
  rm -rf "$tree" && mkdir -p "$tree"
  cp "$repo/package.json" "$repo/package-lock.json" "$tree/"
  (
    cd "$tree"
    export PATH="$(dirname "$node20"):$PATH" npm_config_nodedir="${NODE20_HEADERS:-/usr}"
    npm ci --no-audit --no-fund --loglevel=error >&2
    npm install --no-save --no-audit --no-fund --loglevel=error better-sqlite3@12.11.1 >&2
  )
  touch "$tree/.ready"
fi
# The code itself is the repository's, as it is now (committed or not), copied over the modules.
(cd "$repo" && git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} sh -c '[ -f "{}" ] && mkdir -p "'"$tree"'/$(dirname "{}")" && cp "{}" "'"$tree"'/{}"' )
echo "$tree"
