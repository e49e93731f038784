#!/usr/bin/env bash
# Installs (or uninstalls) Strata: `make install` / `make uninstall` call this, and
# scripts/make-deb.sh uses it to fill the package's tree. Everything goes under
# $DESTDIR (empty: the running system); see README.md "Install" for the list.
#
# usage: scripts/install.sh install|uninstall|files
#   files: print the installed paths (without DESTDIR), one a line.
# environment (defaults in brackets):
#   PREFIX [/usr/local]  DESTDIR []  SYSCONFDIR [/etc]  BINARIES [.build/release]
#   MANPAGES [.build/man]  (stratad.8 and stratactl.1 from scripts/make-man.sh)
#   UNITDIR [PREFIX/lib/systemd/system]  SYSUSERSDIR [PREFIX/lib/sysusers.d]
#   TMPFILESDIR [PREFIX/lib/tmpfiles.d]  MANDIR [PREFIX/share/man]
#   DOCDIR [PREFIX/share/doc/strata]  DATADIR [PREFIX/share/strata]
#   BASHCOMPDIR [PREFIX/share/bash-completion/completions]
#   ZSHCOMPDIR [PREFIX/share/zsh/site-functions]
#   FISHCOMPDIR [PREFIX/share/fish/vendor_completions.d]
#   KEEP_CONFIG [1]  uninstall: 0 also removes SYSCONFDIR/strata/stratad.yaml
set -euo pipefail
cd "$(dirname "$0")/.."

action=${1:-}
PREFIX=${PREFIX:-/usr/local}
PREFIX=${PREFIX%/}
DESTDIR=${DESTDIR:-}
SYSCONFDIR=${SYSCONFDIR:-/etc}
BINARIES=${BINARIES:-.build/release}
MANPAGES=${MANPAGES:-.build/man}
BINDIR=$PREFIX/bin
UNITDIR=${UNITDIR:-$PREFIX/lib/systemd/system}
SYSUSERSDIR=${SYSUSERSDIR:-$PREFIX/lib/sysusers.d}
TMPFILESDIR=${TMPFILESDIR:-$PREFIX/lib/tmpfiles.d}
MANDIR=${MANDIR:-$PREFIX/share/man}
DOCDIR=${DOCDIR:-$PREFIX/share/doc/strata}
DATADIR=${DATADIR:-$PREFIX/share/strata}
BASHCOMPDIR=${BASHCOMPDIR:-$PREFIX/share/bash-completion/completions}
ZSHCOMPDIR=${ZSHCOMPDIR:-$PREFIX/share/zsh/site-functions}
FISHCOMPDIR=${FISHCOMPDIR:-$PREFIX/share/fish/vendor_completions.d}
KEEP_CONFIG=${KEEP_CONFIG:-1}
CONFIG_FILE=$SYSCONFDIR/strata/stratad.yaml

units=(stratad.service stratad.socket stratad-data.socket strata-maintenance.service strata-maintenance.timer strata-litestream.service)
docs=(Daemon.md Security.md Scheduler.md CLI.md Deferral.md Migration.md StagedMigration.md ModelFiles.md Predicates.md Storage.md Limits.md Fleet.md)

# The files this installs (without DESTDIR), except the configuration file.
files() {
  echo "$BINDIR/stratad"
  echo "$BINDIR/stratactl"
  for unit in "${units[@]}"; do echo "$UNITDIR/$unit"; done
  echo "$SYSUSERSDIR/strata.conf"
  echo "$TMPFILESDIR/strata.conf"
  echo "$MANDIR/man8/stratad.8"
  echo "$MANDIR/man1/stratactl.1"
  echo "$MANDIR/man5/stratad.yaml.5"
  echo "$BASHCOMPDIR/stratactl"
  echo "$BASHCOMPDIR/stratad"
  echo "$ZSHCOMPDIR/_stratactl"
  echo "$ZSHCOMPDIR/_stratad"
  echo "$FISHCOMPDIR/stratactl.fish"
  echo "$FISHCOMPDIR/stratad.fish"
  for doc in "${docs[@]}"; do echo "$DOCDIR/$doc"; done
  echo "$DOCDIR/litestream.yml.example"
  for model in config/models/Aircraft/*; do echo "$DATADIR/models/Aircraft/${model##*/}"; done
  echo "$DATADIR/stages/Aircraft.yaml"
}

# A unit from systemd/ with its paths moved to this prefix (the files name /usr/local/bin
# and /usr/share/doc/strata, the defaults).
unit_for_prefix() {
  sed -e "s#/usr/local/bin/#$BINDIR/#g" -e "s#file:///usr/share/doc/strata/#file://$DOCDIR/#g" \
      -e "s#--config /etc/strata/stratad.yaml#--config $CONFIG_FILE#" "systemd/$1"
}

install_all() {
  for binary in stratad stratactl; do
    [ -x "$BINARIES/$binary" ] || { echo "install: $BINARIES/$binary is missing: build it first (make install builds it)" >&2; exit 1; }
  done
  for page in stratad.8 stratactl.1; do
    [ -f "$MANPAGES/$page" ] || { echo "install: $MANPAGES/$page is missing: run scripts/make-man.sh first (make install does)" >&2; exit 1; }
  done
  local d=$DESTDIR
  install -d "$d$BINDIR" "$d$UNITDIR" "$d$SYSUSERSDIR" "$d$TMPFILESDIR" "$d$MANDIR/man1" "$d$MANDIR/man5" \
    "$d$MANDIR/man8" "$d$BASHCOMPDIR" "$d$ZSHCOMPDIR" "$d$FISHCOMPDIR" "$d$DOCDIR" "$d$DATADIR/models/Aircraft" \
    "$d$SYSCONFDIR/strata"
  install -m 0755 "$BINARIES/stratad" "$BINARIES/stratactl" "$d$BINDIR/"
  for unit in "${units[@]}"; do
    unit_for_prefix "$unit" > "$d$UNITDIR/$unit"
    chmod 0644 "$d$UNITDIR/$unit"
  done
  install -m 0644 systemd/strata.sysusers "$d$SYSUSERSDIR/strata.conf"
  install -m 0644 systemd/strata.tmpfiles "$d$TMPFILESDIR/strata.conf"
  install -m 0644 "$MANPAGES/stratad.8" "$d$MANDIR/man8/stratad.8"
  install -m 0644 "$MANPAGES/stratactl.1" "$d$MANDIR/man1/stratactl.1"
  sed -e "s#/usr/share/doc/strata#$DOCDIR#g" -e "s#/usr/share/strata#$DATADIR#g" packaging/man/stratad.yaml.5 > "$d$MANDIR/man5/stratad.yaml.5"
  chmod 0644 "$d$MANDIR/man5/stratad.yaml.5"
  # Completions come from the argument parser of the binaries being installed.
  for binary in stratad stratactl; do
    # bash completions are sourced, not run: no #! line.
    "$BINARIES/$binary" --generate-completion-script bash | sed -e '1{/^#!/d}' > "$d$BASHCOMPDIR/$binary"
    "$BINARIES/$binary" --generate-completion-script zsh > "$d$ZSHCOMPDIR/_$binary"
    "$BINARIES/$binary" --generate-completion-script fish > "$d$FISHCOMPDIR/$binary.fish"
    chmod 0644 "$d$BASHCOMPDIR/$binary" "$d$ZSHCOMPDIR/_$binary" "$d$FISHCOMPDIR/$binary.fish"
  done
  for doc in "${docs[@]}"; do install -m 0644 "docs/$doc" "$d$DOCDIR/$doc"; done
  install -m 0644 packaging/litestream.yml.example "$d$DOCDIR/litestream.yml.example"
  install -m 0644 config/models/Aircraft/* "$d$DATADIR/models/Aircraft/"
  install -D -m 0644 Examples/StagedMigration/Aircraft/stages.yaml "$d$DATADIR/stages/Aircraft.yaml"
  # The configuration: never overwrite one that is there (an operator's edits).
  if [ -e "$d$CONFIG_FILE" ]; then
    echo "install: keeping $d$CONFIG_FILE (the shipped default is $d$DOCDIR/stratad.yaml.default)"
  else
    sed -e "s#/usr/share/doc/strata#$DOCDIR#g" -e "s#/usr/share/strata#$DATADIR#g" packaging/stratad.yaml > "$d$CONFIG_FILE"
    chmod 0644 "$d$CONFIG_FILE"
  fi
  sed -e "s#/usr/share/doc/strata#$DOCDIR#g" -e "s#/usr/share/strata#$DATADIR#g" packaging/stratad.yaml > "$d$DOCDIR/stratad.yaml.default"
  chmod 0644 "$d$DOCDIR/stratad.yaml.default"
}

uninstall_all() {
  local d=$DESTDIR
  { files; echo "$DOCDIR/stratad.yaml.default"; } | while read -r file; do rm -f "$d$file"; done
  rmdir "$d$DATADIR/models/Aircraft" "$d$DATADIR/models" "$d$DATADIR/stages" "$d$DATADIR" "$d$DOCDIR" 2>/dev/null || true
  if [ "$KEEP_CONFIG" = 0 ]; then
    rm -f "$d$CONFIG_FILE"; rmdir "$d$SYSCONFDIR/strata" 2>/dev/null || true
  else
    [ -e "$d$CONFIG_FILE" ] && echo "uninstall: kept $d$CONFIG_FILE (make uninstall KEEP_CONFIG=0 removes it)"
  fi
  [ -d "$d/var/lib/strata" ] && echo "uninstall: kept the stores in $d/var/lib/strata and the strata user and group"
  return 0
}

case "$action" in
  install) install_all ;;
  uninstall) uninstall_all ;;
  files) files; echo "$CONFIG_FILE"; echo "$DOCDIR/stratad.yaml.default" ;;
  *) echo "usage: $0 install|uninstall|files" >&2; exit 2 ;;
esac
