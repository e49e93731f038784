#!/usr/bin/env bash
# Builds the Debian package of Strata with dpkg-deb, offline: `make deb` calls this after
# building the binaries and man pages.
#
# usage: scripts/make-deb.sh BINARIES MANPAGES OUTDIR
#   BINARIES  directory with stratad and stratactl (.build/release, or .build/debug for tests)
#   MANPAGES  directory with stratad.8 and stratactl.1 (scripts/make-man.sh)
#   OUTDIR    where strata_VERSION_ARCH.deb is written (its tree: OUTDIR/root)
# DEB_MAINTAINER: the Maintainer field (default: Strata developers <strata@example.org>).
# DEB_COMPRESS: dpkg-deb's compressor, xz (default) or gzip (faster: the tests' debug package).
# Prints the package's path on the last line.
#
# The package installs under /usr (units in /usr/lib/systemd/system, sysusers.d and
# tmpfiles.d in /usr/lib), /etc/strata/stratad.yaml as a conffile, and maintainer scripts
# from packaging/debian. Depends: from dpkg-shlibdeps on the binaries, plus systemd.
set -euo pipefail
binaries=$(realpath "${1:?usage: make-deb.sh BINARIES MANPAGES OUTDIR}")
manpages=$(realpath "${2:?usage: make-deb.sh BINARIES MANPAGES OUTDIR}")
out=$(realpath -m "${3:?usage: make-deb.sh BINARIES MANPAGES OUTDIR}")
cd "$(dirname "$0")/.."
root=$out/root
rm -rf "$root"
mkdir -p "$root/DEBIAN"

version=$("$binaries/stratad" --version)
maintainer=${DEB_MAINTAINER:-Strata developers <strata@example.org>}
arch=$(dpkg --print-architecture)

# The tree: the same installation as `make install PREFIX=/usr`, with Debian's directories.
PREFIX=/usr SYSCONFDIR=/etc DESTDIR=$root BINARIES=$binaries MANPAGES=$manpages \
  ZSHCOMPDIR=/usr/share/zsh/vendor-completions scripts/install.sh install >/dev/null
rm -f "$root/usr/share/doc/strata/stratad.yaml.default"   # the conffile is the default
# Debian policy: stripped binaries, compressed man pages and changelog, a copyright file.
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/stratad" "$root/usr/bin/stratactl"
gzip -9n "$root"/usr/share/man/man*/*
install -m 0644 packaging/debian/copyright "$root/usr/share/doc/strata/copyright"
# A native package (no upstream tarball): changelog.gz, not changelog.Debian.gz.
sed -e "s/@VERSION@/$version/" -e "s/@MAINTAINER@/$maintainer/" packaging/debian/changelog | gzip -9n > "$root/usr/share/doc/strata/changelog.gz"
chmod 0644 "$root/usr/share/doc/strata/changelog.gz"
install -D -m 0644 packaging/debian/lintian-overrides "$root/usr/share/lintian/overrides/strata"
# The tree may have been made under a restrictive umask.
find "$root" -type d -exec chmod 0755 {} +

# Depends: the shared libraries the binaries link (libsystemd0, libsqlite3-0, libc6, …).
# A release build links the Swift runtime statically (--static-swift-stdlib); a debug build
# links the toolchain's, which no Debian package provides: those are left out (the debug
# package is for this machine's tests only).
shlibs=$(mktemp -d)
mkdir -p "$shlibs/debian"
touch "$shlibs/debian/control"
depends=$(cd "$shlibs" && dpkg-shlibdeps -O --ignore-missing-info -e"$binaries/stratad" -e"$binaries/stratactl" 2>/dev/null \
  | sed -n 's/^shlibs:Depends=//p')
rm -rf "$shlibs"
[ -n "$depends" ] || { echo "make-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
if ldd "$binaries/stratad" | grep -q libswiftCore; then
  echo "make-deb: note: $binaries/stratad links the Swift runtime dynamically; this package runs only where $(ldd "$binaries/stratad" | sed -n 's/.*libswiftCore.so => \(.*\)\/libswiftCore.so.*/\1/p') exists" >&2
fi

size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: strata
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends, systemd (>= 247)
Suggests: litestream
Section: database
Priority: optional
Description: object persistence and schema evolution over SQLite, with a daemon
 Strata opens SQLite stores described by a versioned object model, migrates
 them at open with lightweight migration and defers the expensive cleanup to a
 ledger kept in the store, finished online while the machine is idle.
 .
 This package ships stratad, the systemd-native daemon (Varlink admin and data
 sockets under /run/strata, socket-activated, stores under /var/lib/strata),
 stratactl, its admin CLI, the units, the strata system user and group, man
 pages and shell completions. Members of the strata group may use the data
 socket.
CONTROL
echo /etc/strata/stratad.yaml > "$root/DEBIAN/conffiles"
for script in postinst prerm postrm; do install -m 0755 "packaging/debian/$script" "$root/DEBIAN/$script"; done
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"

deb=$out/strata_${version}_${arch}.deb
dpkg-deb --root-owner-group -Z"${DEB_COMPRESS:-xz}" --build "$root" "$deb" >/dev/null
echo "$deb"
