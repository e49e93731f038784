#!/usr/bin/env bash
# Generates the man pages stratad(8) and stratactl(1) from the binaries' argument parsers
# with swift-argument-parser's generate-manual (the tool its `generate-manual` plugin runs),
# built once from the package's own checkout of swift-argument-parser into
# .build/generate-manual. The configuration reference, stratad.yaml(5), is hand-written
# (packaging/man/stratad.yaml.5).
#
# usage: scripts/make-man.sh BINARIES OUTDIR
set -euo pipefail
binaries=$(realpath "${1:?usage: make-man.sh BINARIES OUTDIR}")
out=$(realpath -m "${2:?usage: make-man.sh BINARIES OUTDIR}")
cd "$(dirname "$0")/.."
checkout=.build/checkouts/swift-argument-parser
[ -f "$checkout/Package.swift" ] || swift package resolve
tool=.build/generate-manual/debug/generate-manual
if [ ! -x "$tool" ]; then
  # Its own deprecation warnings are swift-argument-parser's, not ours: silenced.
  swift build --package-path "$checkout" --scratch-path .build/generate-manual --product generate-manual \
    -Xswiftc -suppress-warnings >&2
fi
mkdir -p "$out"
# A fixed date (the last commit's) keeps the pages reproducible.
date=$(git log -1 --format=%cs 2>/dev/null || date -u +%F)
"$tool" "$binaries/stratad" --section 8 --date "$date" --output-directory "$out" >/dev/null
"$tool" "$binaries/stratactl" --section 1 --date "$date" --output-directory "$out" >/dev/null
for page in stratad.8 stratactl.1; do
  [ -s "$out/$page" ] || { echo "make-man: $out/$page was not generated" >&2; exit 1; }
done
# Touch-ups of the generated mdoc: blank lines (paragraphs of a discussion) become .Pp;
# stratad has no subcommands, so the synopsis' `subcommand` and the implicit `help`
# entry go; both pages get a SEE ALSO section.
for page in stratad.8 stratactl.1; do
  sed -i -e 's/^$/.Pp/' "$out/$page"
  [ -z "$(tail -c1 "$out/$page")" ] || echo >> "$out/$page"   # the generator ends without a newline
done
sed -i -e '/^\.Ar subcommand$/d' -e '/^\.It Em help$/,/^\.El$/d' "$out/stratad.8"
cat >> "$out/stratad.8" <<'MDOC'
.Sh FILES
.Bl -tag -width Ds
.It Pa /etc/strata/stratad.yaml
the configuration,
.Xr stratad.yaml 5
.It Pa /var/lib/strata
the stores (the unit's StateDirectory=)
.It Pa /run/strata/admin.sock , Pa /run/strata/data.sock
the sockets of stratad.socket and stratad-data.socket
.El
.Sh SEE ALSO
.Xr stratactl 1 ,
.Xr stratad.yaml 5 ,
.Xr systemctl 1 ,
.Xr journalctl 1 ,
.Xr sysusers.d 5
MDOC
cat >> "$out/stratactl.1" <<'MDOC'
.Sh SEE ALSO
.Xr stratad 8 ,
.Xr stratad.yaml 5
MDOC
