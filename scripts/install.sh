#!/bin/sh
# Install discern's prebuilt binary. Read it before you run it; it does only this:
#
#   1. picks the tarball for this machine: Linux or macOS, on x86_64 or aarch64;
#   2. downloads discern-<version>-<target>.tar.gz and its .sha256 from
#      $DISCERN_INSTALL_BASE/v<version>/ (GitHub's releases/download/<tag>/ layout);
#   3. checks the tarball's SHA-256 against the .sha256 file BEFORE unpacking anything;
#   4. puts the binary at $DISCERN_BIN_DIR/discern (default ~/.local/bin) in one rename,
#      replacing an older discern there; nothing else on the machine is touched.
#
# Any failure (an unsupported platform, a failed download, a checksum that does not match)
# stops it with the reason and leaves nothing installed: the work happens in a temporary
# folder that is removed on exit.
#
#   curl -fsSL https://github.com/discern-dev/discern/releases/latest/download/install.sh | sh
#
# Environment:
#   DISCERN_VERSION       the version to install, e.g. 0.1.0 (default: the latest release)
#   DISCERN_BIN_DIR       where to put the binary (default: $HOME/.local/bin)
#   DISCERN_INSTALL_BASE  where the releases are (default: the project's GitHub releases).
#                         Without DISCERN_VERSION, the latest version is read from the file
#                         $DISCERN_INSTALL_BASE/latest (one line: the version); on GitHub, from
#                         the `latest` file attached to the latest release.
set -eu

# The project's GitHub repository: every default address below is built from it.
DISCERN_REPOSITORY="discern-dev/discern"

say() {
  echo "discern-install: $*" >&2
}

refuse() {
  say "error: $*"
  say "nothing was installed."
  exit 1
}

# --- what to fetch -------------------------------------------------------------------------

github="https://github.com/$DISCERN_REPOSITORY/releases"
base="${DISCERN_INSTALL_BASE:-$github/download}"
base="${base%/}"
if [ -n "${DISCERN_INSTALL_BASE:-}" ]; then
  latest_url="$base/latest"
else
  latest_url="$github/latest/download/latest"
fi
bin_dir="${DISCERN_BIN_DIR:-${HOME:?HOME is not set; set DISCERN_BIN_DIR}/.local/bin}"

os="$(uname -s)"
arch="$(uname -m)"
case "$arch" in
  x86_64 | amd64) arch=x86_64 ;;
  aarch64 | arm64) arch=aarch64 ;;
esac
case "$os" in
  Linux) os_part=unknown-linux-musl ;;
  Darwin)
    os_part=apple-darwin
    # A shell running under Rosetta reports x86_64 on Apple silicon: take the native binary.
    if [ "$arch" = x86_64 ] && [ "$(sysctl -n hw.optional.arm64 2>/dev/null || echo 0)" = 1 ]; then
      arch=aarch64
    fi
    ;;
  *) os_part="" ;;
esac
case "$arch" in
  x86_64 | aarch64) ;;
  *) os_part="" ;;
esac
if [ -z "$os_part" ]; then
  refuse "no prebuilt discern for $(uname -s) on $(uname -m): releases are built for Linux and \
macOS on x86_64 and aarch64. Build it from source instead: \
https://github.com/$DISCERN_REPOSITORY#install"
fi
target="$arch-$os_part"

# --- tools ---------------------------------------------------------------------------------

if command -v curl >/dev/null 2>&1; then
  fetch() { curl --fail --silent --show-error --location --retry 2 --output "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
  fetch() { wget --quiet --output-document="$2" "$1"; }
else
  refuse "neither curl nor wget is installed; install one of them"
fi

if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | cut -d ' ' -f 1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | cut -d ' ' -f 1; }
else
  refuse "neither sha256sum nor shasum is installed: the download cannot be verified"
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/discern-install.XXXXXX")" || refuse "cannot create a temporary folder"
staged=""
cleanup() {
  rm -rf "$tmp"
  if [ -n "$staged" ]; then rm -f "$staged"; fi
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# --- the version ---------------------------------------------------------------------------

version="${DISCERN_VERSION:-}"
if [ -z "$version" ]; then
  fetch "$latest_url" "$tmp/latest" ||
    refuse "cannot read the latest version from $latest_url (set DISCERN_VERSION to pick one)"
  version="$(head -n 1 "$tmp/latest" | tr -d ' \r\n')"
fi
version="${version#v}"
case "$version" in
  "" | *[!0-9A-Za-z.+-]*) refuse "'$version' is not a version (expected e.g. 0.1.0)" ;;
esac

# --- download and verify -------------------------------------------------------------------

name="discern-$version-$target.tar.gz"
url="$base/v$version/$name"
say "downloading $url"
fetch "$url" "$tmp/$name" ||
  refuse "cannot download $url: is there a discern $version for $target?"
fetch "$url.sha256" "$tmp/$name.sha256" ||
  refuse "cannot download the checksum $url.sha256"

expected="$(cut -d ' ' -f 1 <"$tmp/$name.sha256" | head -n 1)"
case "$expected" in
  *[!0-9a-f]* | "") refuse "$url.sha256 holds no SHA-256" ;;
esac
[ "${#expected}" -eq 64 ] || refuse "$url.sha256 holds no SHA-256"
actual="$(sha256 "$tmp/$name")"
if [ "$actual" != "$expected" ]; then
  refuse "checksum mismatch for $name: expected $expected, got $actual. The download is \
corrupt or was tampered with"
fi
say "checksum verified (sha256 $actual)"

# --- unpack and install --------------------------------------------------------------------

mkdir "$tmp/unpacked"
gzip -dc "$tmp/$name" | tar -xf - -C "$tmp/unpacked" discern ||
  refuse "$name cannot be unpacked or has no discern binary at its top level"
[ -f "$tmp/unpacked/discern" ] || refuse "$name has no discern binary at its top level"

mkdir -p "$bin_dir" || refuse "cannot create $bin_dir"
# Copy next to the destination, then rename over it: the old binary stays whole until the new
# one is complete, and a running discern keeps its own.
staged="$bin_dir/.discern.install.$$"
cp "$tmp/unpacked/discern" "$staged" || refuse "cannot write to $bin_dir"
chmod 755 "$staged"
mv -f "$staged" "$bin_dir/discern" || refuse "cannot replace $bin_dir/discern"
staged=""

say "installed discern $version ($target) at $bin_dir/discern"
case ":${PATH:-}:" in
  *":$bin_dir:"*) say "run: discern --help" ;;
  *)
    say "$bin_dir is not on your PATH. Add it for this shell and for new ones:"
    say "  export PATH=\"$bin_dir:\$PATH\""
    say "  echo 'export PATH=\"$bin_dir:\$PATH\"' >> ~/.profile   # or ~/.bashrc, ~/.zshrc"
    ;;
esac
