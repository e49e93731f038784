#!/bin/bash
# generate-varlink-definitions.sh — writes Sources/StrataVarlink/Interfaces/InterfaceDefinitions.swift
# from varlink/io.strata.Admin.varlink and varlink/io.strata.Store.varlink, the single source of
# the interfaces: the text org.varlink.service.GetInterfaceDescription serves is the file's.
# Then runs scripts/generate-varlink-types.py, which writes the Swift named types and methods
# (Strata{Admin,Store}+Types.swift, +Methods.swift) from the same files and their .swift.json notes.
# Run it after changing a .varlink file (InterfaceDefinitionTests fails until you do: it checks
# that the served definitions are the files and that the Swift types match them).
#
# usage: scripts/generate-varlink-definitions.sh [--check]
#   --check: write nothing; exit 1 when the checked-in file differs from what would be generated.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
output="$root/Sources/StrataVarlink/Interfaces/InterfaceDefinitions.swift"

emit() {  # NAME FILE: one `static let NAME` with FILE's text, indented like the rest of the file
    echo "    static let $1 = #\"\"\""
    sed -e 's/[[:space:]]*$//' -e 's/^\(.\)/        \1/' "$2"
    echo '        """#'
}

generated=$(
    echo '// Generated from varlink/*.varlink (a test checks they match): the interface definitions'
    echo '// served by org.varlink.service.GetInterfaceDescription.'
    echo '// Do not edit: change the .varlink file and run scripts/generate-varlink-definitions.sh.'
    echo
    echo 'enum InterfaceDefinitions {'
    emit admin "$root/varlink/io.strata.Admin.varlink"
    echo
    emit store "$root/varlink/io.strata.Store.varlink"
    echo
    echo '}'
)

if [ "${1:-}" = "--check" ]; then
    if [ "$generated" != "$(cat "$output")" ]; then
        echo "$output differs from varlink/*.varlink: run scripts/generate-varlink-definitions.sh" >&2
        diff <(echo "$generated") "$output" >&2 || true
        exit 1
    fi
    exec python3 "$root/scripts/generate-varlink-types.py" --check
fi
echo "$generated" > "$output"
exec python3 "$root/scripts/generate-varlink-types.py"
