#!/usr/bin/env python3
"""generate-varlink-types.py — writes the Swift types of varlink/io.strata.Admin.varlink and
varlink/io.strata.Store.varlink: the named types (`type …`) to
Sources/StrataVarlink/Interfaces/Strata{Admin,Store}+Types.swift, and each method's enum with its
`Parameters` and `Reply` to Strata{Admin,Store}+Methods.swift.

The .varlink file gives each type, its fields, their order, types and optionality. Beside it,
varlink/<interface>.swift.json gives what the IDL cannot say in Swift terms: the `///` docs,
a field's Swift type where it is narrower or wider than the IDL's (`Int64` for an `int`, a
nested string enum for a `string`), an initializer parameter's default value, and (under
"methods") a reply shared by several methods (`replyAlias`: a type written by hand beside the
interface, whose fields InterfaceDefinitionTests compares with the IDL). A name in
the JSON that the IDL does not declare is an error, so the two cannot drift apart silently.

usage: scripts/generate-varlink-types.py [--check] [--root DIR]
  --check: write nothing; exit 1 when a checked-in file differs from what would be generated.
  --root DIR: the package root holding varlink/ and Sources/ (default: this script's package).
Run by scripts/generate-varlink-definitions.sh (InterfaceDefinitionTests runs its --check).
"""
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INTERFACES = [("io.strata.Admin", "StrataAdmin"), ("io.strata.Store", "StrataStore")]
SCALARS = {"string": "String", "int": "Int", "float": "Double", "bool": "Bool", "object": "JSONValue"}
WIDTH = 140


def fail(message):
    sys.exit(f"generate-varlink-types: {message}")


def named_types(idl_path):
    """The `type Name (field: type, …)` declarations of a .varlink file, in order."""
    text = "\n".join(line.split("#", 1)[0] for line in open(idl_path, encoding="utf-8").read().split("\n"))
    types = []
    for match in re.finditer(r"\btype\s+(\w+)\s*\(([^()]*)\)", text):
        fields = []
        for field in match.group(2).split(","):
            if field.strip():
                name, _, idl_type = field.partition(":")
                fields.append((name.strip(), idl_type.strip()))
        types.append((match.group(1), fields))
    return types


def swift_type(idl_type, where):
    """The Swift spelling of an IDL type: ?T → T?, []T → [T], [string]T → [String: T]."""
    if idl_type.startswith("?"):
        return swift_type(idl_type[1:], where) + "?"
    if idl_type.startswith("[]"):
        return "[" + swift_type(idl_type[2:], where) + "]"
    if idl_type.startswith("[string]"):
        return "[String: " + swift_type(idl_type[8:], where) + "]"
    if idl_type in SCALARS:
        return SCALARS[idl_type]
    if re.fullmatch(r"[A-Z]\w*", idl_type):
        return idl_type
    fail(f"{where}: the IDL type '{idl_type}' has no Swift spelling here; add it to SCALARS or name the type")


def wrapped(head, items, tail, indent, width=WIDTH):
    """`head` + items joined by ", " + `tail`, wrapped at `width` with continuation lines aligned."""
    lines, line = [], indent + head
    for index, item in enumerate(items):
        piece = item + (", " if index < len(items) - 1 else tail)
        if len(line) + len(piece.rstrip()) > width and line.strip() != head.strip():
            lines.append(line.rstrip())
            line = indent + " " * len(head) + piece
        else:
            line += piece
    lines.append(line)
    return lines


def emit_type(name, fields, notes, interface, indent="    ", where=None):
    where = where or f"{interface}.{name}"
    known = {field for field, _ in fields}
    for field in list(notes.get("fields", {})) + list(notes.get("defaults", {})):
        if field not in known:
            fail(f"{where}.{field}: in the .swift.json, not in the .varlink; remove it or add the field")
    out = [f"/// {line}" for line in notes.get("doc", [f"`{name}` of {interface}."])]
    out.append(f"public struct {name}: Codable, Sendable, Hashable {{")
    for enum_name, enum in notes.get("enums", {}).items():
        out += [f"    /// {enum['doc']}", f"    public enum {enum_name}: String, VarlinkStringEnum {{",
                f"        case {', '.join(enum['cases'])}", "    }", ""]
    parameters = []
    for field, idl_type in fields:
        note = notes.get("fields", {}).get(field, {})
        spelled = swift_type(idl_type, f"{where}.{field}")
        if "swift" in note:
            optional = spelled.endswith("?")
            if note["swift"].endswith("?") != optional:
                fail(f"{where}.{field}: the .swift.json type '{note['swift']}' and the IDL's '{idl_type}' differ in optionality")
            spelled = note["swift"]
        out += [f"    /// {note.get('doc', f'The `{field}` field.')}", f"    public var {field}: {spelled}"]
        default = notes.get("defaults", {}).get(field)
        parameters.append(f"{field}: {spelled}" + (f" = {default}" if default else ""))
    out += ["", "    /// Memberwise initializer."]
    out += wrapped("public init(", parameters, ") {", "    ", WIDTH - len(indent))
    out += [f"        self.{field} = {field}" for field, _ in fields]
    out += ["    }", "}"]
    return [indent + line if line else line for line in out]


def idl_methods(idl_path):
    """The `method Name(parameters) -> (reply)` declarations of a .varlink file, in order."""
    text = "\n".join(line.split("#", 1)[0] for line in open(idl_path, encoding="utf-8").read().split("\n"))

    def fields(declaration):
        return [(f.partition(":")[0].strip(), f.partition(":")[2].strip()) for f in declaration.split(",") if f.strip()]
    return [(m.group(1), fields(m.group(2)), fields(m.group(3)))
            for m in re.finditer(r"\bmethod\s+(\w+)\s*\(([^()]*)\)\s*->\s*\(([^()]*)\)", text)]


def emit_method(name, parameters, reply, notes, interface, swift_name):
    where = f"{interface}.{name}"
    out = [f"    /// {line}" for line in notes.get("doc", [f"`{name}` of {interface}."])]
    out += [f"    public enum {name}: VarlinkMethod {{", "        /// The interface this belongs to.",
            f"        public typealias Interface = {swift_name}", "        /// The name on the wire.",
            f"        public static let name = \"{name}\""]
    if parameters:
        out += [""] + emit_type("Parameters", parameters, {"doc": ["What the method takes."], **notes.get("parameters", {})},
                                interface, indent="        ", where=f"{where} parameters")
    else:
        out += ["        /// The method takes no parameters.", "        public typealias Parameters = VarlinkEmpty"]
    out.append("")
    if "replyAlias" in notes:
        out += ["        /// What the method replies.", f"        public typealias Reply = {notes['replyAlias']}"]
    elif reply:
        out += emit_type("Reply", reply, {"doc": ["What the method replies."], **notes.get("reply", {})},
                         interface, indent="        ", where=f"{where} reply")
    else:
        out += ["        /// The method replies with no fields.", "        public typealias Reply = VarlinkEmpty"]
    out.append("    }")
    return out


def generate_methods(interface, swift_name):
    idl_path = os.path.join(ROOT, "varlink", f"{interface}.varlink")
    notes = json.load(open(os.path.join(ROOT, "varlink", f"{interface}.swift.json"), encoding="utf-8")).get("methods", {})
    methods = idl_methods(idl_path)
    declared = {name for name, _, _ in methods}
    for name in notes:
        if name not in declared:
            fail(f"{interface}.{name}: in {interface}.swift.json's methods, not a method of the .varlink; remove it")
    out = ["import Foundation", "",
           f"// Generated from varlink/{interface}.varlink and varlink/{interface}.swift.json: the",
           "// methods (`method …` in the IDL), each with its Parameters and Reply. Do not edit: change those",
           "// files and run scripts/generate-varlink-definitions.sh (InterfaceDefinitionTests checks it was run).", "",
           f"extension {swift_name} {{"]
    for index, (name, parameters, reply) in enumerate(methods):
        if index:
            out.append("")
        out += emit_method(name, parameters, reply, notes.get(name, {}), interface, swift_name)
    out.append("}")
    return "\n".join(out) + "\n"


def generate(interface, swift_name):
    idl_path = os.path.join(ROOT, "varlink", f"{interface}.varlink")
    notes_path = os.path.join(ROOT, "varlink", f"{interface}.swift.json")
    notes = json.load(open(notes_path, encoding="utf-8"))
    types = named_types(idl_path)
    declared = {name for name, _ in types}
    for name in notes:
        if name != "methods" and name not in declared:
            fail(f"{interface}.{name}: in {os.path.basename(notes_path)}, not a type of the .varlink; remove it")
    out = ["import Foundation", "",
           f"// Generated from varlink/{interface}.varlink and varlink/{interface}.swift.json: the named",
           "// types (`type …` in the IDL). Do not edit: change those files and run",
           "// scripts/generate-varlink-definitions.sh (InterfaceDefinitionTests checks it was run).", "",
           f"extension {swift_name} {{"]
    for index, (name, fields) in enumerate(types):
        if index:
            out.append("")
        out += emit_type(name, fields, notes.get(name, {}), interface)
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    global ROOT
    arguments = sys.argv[1:]
    check = "--check" in arguments
    if "--root" in arguments:
        ROOT = arguments[arguments.index("--root") + 1]
    stale = []
    outputs = [(f"{swift_name}+Types.swift", generate(interface, swift_name)) for interface, swift_name in INTERFACES]
    outputs += [(f"{swift_name}+Methods.swift", generate_methods(interface, swift_name)) for interface, swift_name in INTERFACES]
    for name, text in outputs:
        path = os.path.join(ROOT, "Sources", "StrataVarlink", "Interfaces", name)
        current = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if check:
            if current != text:
                stale.append(path)
        elif current != text:
            with open(path, "w", encoding="utf-8") as file:
                file.write(text)
    if stale:
        sys.exit("\n".join(f"{path} differs from varlink/: run scripts/generate-varlink-definitions.sh" for path in stale))


if __name__ == "__main__":
    main()
