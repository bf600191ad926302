# Sourced, not run: puts Node.js 24 first on PATH when the machine's node is older.
#
#   source scripts/node24.sh     (from the repository's root; .ci/run does this)
#
# Node 24 comes from the npm registry's node-linux-<arch> package, which carries the
# official binary and headers, and is kept in ~/.cache/audio-share/node-<version>.
# npm itself stays the machine's (npm 11 runs on Node 24). npm_config_nodedir points
# node-gyp at the package's headers, so native addons build without a download.
_node24_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ "$(_node24_major)" -lt 24 ]; then
  case "$(uname -m)" in
    x86_64) _node24_arch=x64 ;;
    aarch64 | arm64) _node24_arch=arm64 ;;
    *) echo "scripts/node24.sh: no Node.js 24 package for $(uname -m); install Node 24 yourself" >&2; return 1 ;;
  esac
  _node24_home="${XDG_CACHE_HOME:-$HOME/.cache}/audio-share/node-24-linux-$_node24_arch"
  if [ ! -x "$_node24_home/bin/node" ]; then
    _node24_tmp="$(mktemp -d)"
    (cd "$_node24_tmp" && npm pack --silent "node-linux-$_node24_arch@24" >/dev/null && tar xzf node-linux-*.tgz)
    mkdir -p "$(dirname "$_node24_home")"
    rm -rf "$_node24_home"
    mv "$_node24_tmp/package" "$_node24_home"
    rm -rf "$_node24_tmp"
  fi
  export PATH="$_node24_home/bin:$PATH"
  export npm_config_nodedir="$_node24_home"
  unset _node24_tmp _node24_arch _node24_home
fi
unset -f _node24_major
echo "Node.js $(node --version) at $(command -v node)"
