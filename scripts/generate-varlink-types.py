#!/usr/bin/env python3
"""generate-varlink-types.py — writes the Swift side of varlink/io.strata.Admin.varlink and
varlink/io.strata.Store.varlink into Sources/StrataVarlink/Interfaces/:
  Strata{Admin,Store}+Types.swift    the named types (`type …`), with a nested Swift enum for
                                     each field whose type is a Varlink enum `(a, b, c)`;
  Strata{Admin,Store}+Methods.swift  each method's enum with its `Parameters` and `Reply`, and
                                     the interface's `methods` list;
  Strata{Admin,Store}+Errors.swift   each error's parameters (`error …`), the interface's
                                     `errors` list and its typed `Failure`.

The .varlink file gives each type, method and error, its fields, their order, types and
optionality, and the cases of every enum. Beside it, varlink/<interface>.swift.json gives what
the IDL cannot say in Swift terms: the `///` docs, a field's Swift type where it is narrower or
wider than the IDL's (`Int64` for an `int`), the Swift name and doc of an enum field's type
("enum": {"name": "Kind"}; by default the field's name capitalized), an initializer parameter's
default value, and:
  under "methods": a reply shared by several methods (`replyAlias`: a type written by hand beside
    the interface, whose fields InterfaceDefinitionTests compares with the IDL);
  under "errors": an error shared with another interface (`alias`: "StrataStore.NoSuchStore", whose
    IDL fields must be the same), and `reason`: a Swift expression of the other fields that makes
    the error's `reason` (the initializer then does not take it; without a `reason` field in the
    IDL it becomes a computed property).
A name in the JSON that the IDL does not declare is an error, so the two cannot drift apart
silently.

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
DO_NOT_EDIT = ["// scripts/generate-varlink-definitions.sh (InterfaceDefinitionTests checks it was run).", ""]


def fail(message):
    sys.exit(f"generate-varlink-types: {message}")


# MARK: - Reading the IDL

class IDL:
    """A .varlink file: `types`, `methods` and `errors` in order of declaration. A field's type is
    a tuple: ("name", "string" | "SomeType"), ("optional", T), ("array", T), ("map", T) or
    ("enum", [cases])."""
    TOKEN = re.compile(r"->|\[string\]|\[\]|[(),:?]|[A-Za-z_][\w.]*")

    def __init__(self, path):
        text = "\n".join(line.split("#", 1)[0] for line in open(path, encoding="utf-8").read().split("\n"))
        self.where = os.path.basename(path)
        self.tokens, position = [], 0
        while True:
            position = re.compile(r"\s*").match(text, position).end()
            if position >= len(text):
                break
            match = self.TOKEN.match(text, position)
            if not match:
                fail(f"{self.where}: cannot read '{text[position:position + 30].split(chr(10))[0]}'")
            self.tokens.append(match.group(0))
            position = match.end()
        self.index = 0
        self.types, self.methods, self.errors = [], [], []
        self.expect("interface")
        self.name = self.next()
        while self.index < len(self.tokens):
            keyword, name = self.next(), self.next()
            if keyword == "type":
                self.types.append((name, self.structure(f"type {name}")))
            elif keyword == "method":
                parameters = self.structure(f"method {name}")
                self.expect("->")
                self.methods.append((name, parameters, self.structure(f"method {name} reply")))
            elif keyword == "error":
                self.errors.append((name, self.structure(f"error {name}")))
            else:
                fail(f"{self.where}: '{keyword}' where a type, method or error was expected")

    def next(self):
        if self.index >= len(self.tokens):
            fail(f"{self.where}: the file ends early")
        self.index += 1
        return self.tokens[self.index - 1]

    def peek(self, offset=0):
        return self.tokens[self.index + offset] if self.index + offset < len(self.tokens) else None

    def expect(self, token):
        if (found := self.next()) != token:
            fail(f"{self.where}: '{token}' expected, found '{found}'")

    def structure(self, where):
        """`(name: type, …)` as [(name, type)]."""
        self.expect("(")
        fields = []
        while self.peek() != ")":
            name = self.next()
            if self.peek() != ":":
                fail(f"{self.where}: {where}: '{name}' has no type (a named enum type is not supported here: declare the enum on the field)")
            self.next()
            fields.append((name, self.type_expression(f"{where}.{name}")))
            if self.peek() == ",":
                self.next()
        self.next()
        return fields

    def type_expression(self, where):
        token = self.next()
        if token == "?":
            return ("optional", self.type_expression(where))
        if token == "[]":
            return ("array", self.type_expression(where))
        if token == "[string]":
            if self.peek() == "(":
                fail(f"{self.where}: {where}: a set `[string]()` has no Swift spelling here")
            return ("map", self.type_expression(where))
        if token == "(":
            if self.peek(1) == ":" or self.peek() == ")":
                fail(f"{self.where}: {where}: an inline structure has no Swift spelling here; declare a named type")
            cases = [self.next()]
            while self.peek() == ",":
                self.next()
                cases.append(self.next())
            self.expect(")")
            return ("enum", cases)
        return ("name", token)


def idl_text(idl_type):
    """The IDL spelling of a type: `?[]string`, `(a, b)`."""
    kind, inner = idl_type
    prefixes = {"optional": "?", "array": "[]", "map": "[string]"}
    if kind in prefixes:
        return prefixes[kind] + idl_text(inner)
    return f"({', '.join(inner)})" if kind == "enum" else inner


def enum_cases(idl_type):
    """The cases of the enum inside a type (`?[](a, b)`), or None."""
    kind, inner = idl_type
    if kind == "enum":
        return inner
    return enum_cases(inner) if kind in ("optional", "array", "map") else None


def swift_type(idl_type, where, enum_name=None):
    """The Swift spelling of an IDL type: ?T → T?, []T → [T], [string]T → [String: T], an enum → its name."""
    kind, inner = idl_type
    if kind == "optional":
        return swift_type(inner, where, enum_name) + "?"
    if kind == "array":
        return "[" + swift_type(inner, where, enum_name) + "]"
    if kind == "map":
        return "[String: " + swift_type(inner, where, enum_name) + "]"
    if kind == "enum":
        return enum_name
    if inner in SCALARS:
        return SCALARS[inner]
    if re.fullmatch(r"[A-Z]\w*", inner):
        return inner
    fail(f"{where}: the IDL type '{inner}' has no Swift spelling here; add it to SCALARS or name the type")


# MARK: - Writing Swift

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


def check_notes(fields, notes, where, keys=("fields", "defaults")):
    known = {field for field, _ in fields}
    for key in keys:
        for field in notes.get(key, {}):
            if field not in known:
                fail(f"{where}.{field}: in the .swift.json, not in the .varlink; remove it or add the field")
    if "enums" in notes:
        fail(f"{where}: 'enums' in the .swift.json: the cases are the .varlink's now; declare the field as `(a, b, c)` "
             "and give its Swift name and doc as the field's \"enum\": {\"name\": …, \"doc\": …}")


def field_lines(fields, notes, where):
    """The stored properties of `fields` (with a nested enum for each enum-typed field) and the
    initializer parameters: (enum lines, property lines, parameters)."""
    enums, properties, parameters = [], [], []
    for field, idl_type in fields:
        note = notes.get("fields", {}).get(field, {})
        cases = enum_cases(idl_type)
        enum_note = note.get("enum", {})
        if enum_note and not cases:
            fail(f"{where}.{field}: the .swift.json gives an enum, the .varlink's type '{idl_text(idl_type)}' has none")
        enum_name = enum_note.get("name", field[:1].upper() + field[1:]) if cases else None
        spelled = swift_type(idl_type, f"{where}.{field}", enum_name)
        if cases:
            if "swift" in note:
                fail(f"{where}.{field}: an enum field takes \"enum\": {{\"name\": …}} in the .swift.json, not \"swift\"")
            enums += [f"/// {enum_note.get('doc', f'The values of `{field}`.')}", f"public enum {enum_name}: String, VarlinkStringEnum {{",
                      f"    case {', '.join(cases)}", "}", ""]
        elif "swift" in note:
            optional = spelled.endswith("?")
            if note["swift"].endswith("?") != optional:
                fail(f"{where}.{field}: the .swift.json type '{note['swift']}' and the IDL's '{idl_text(idl_type)}' differ in optionality")
            spelled = note["swift"]
        properties += [f"/// {note.get('doc', f'The `{field}` field.')}", f"public var {field}: {spelled}"]
        default = notes.get("defaults", {}).get(field)
        parameters.append((field, f"{field}: {spelled}" + (f" = {default}" if default else "")))
    return enums, properties, parameters


def indented(lines, indent):
    return [indent + line if line else line for line in lines]


def emit_type(name, fields, notes, interface, indent="    ", where=None):
    where = where or f"{interface}.{name}"
    check_notes(fields, notes, where)
    enums, properties, parameters = field_lines(fields, notes, where)
    out = [f"/// {line}" for line in notes.get("doc", [f"`{name}` of {interface}."])]
    out.append(f"public struct {name}: Codable, Sendable, Hashable {{")
    out += indented(enums + properties, "    ")
    out += ["", "    /// Memberwise initializer."]
    out += wrapped("public init(", [text for _, text in parameters], ") {", "    ", WIDTH - len(indent))
    out += [f"        self.{field} = {field}" for field, _ in fields]
    out += ["    }", "}"]
    return indented(out, indent)


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


def emit_error(name, fields, notes, interface, idls):
    where = f"{interface}.{name}"
    check_notes(fields, notes, where)
    doc = [f"    /// {line}" for line in notes.get("doc", [f"`{interface}.{name}`."])]
    if "alias" in notes:
        other_swift, _, other_name = notes["alias"].partition(".")
        other = next((idl for swift, idl in idls.items() if swift == other_swift), None)
        other_fields = dict(other.errors).get(other_name) if other else None
        if other_fields != fields:
            fail(f"{where}: the alias {notes['alias']} has other fields in its .varlink ({other_fields}); give the error its own type")
        return doc + [f"    public typealias {name} = {notes['alias']}"]
    reason = notes.get("reason")
    has_reason = any(field == "reason" for field, _ in fields)
    if not reason and not has_reason:
        fail(f"{where}: an error without a `reason` field needs \"reason\" (a Swift expression) in the .swift.json")
    enums, properties, parameters = field_lines(fields, notes, where)
    if reason and has_reason:
        parameters = [(field, text) for field, text in parameters if field != "reason"]
    out = doc + [f"    public struct {name}: VarlinkErrorParameters {{", "        /// The error's name on the wire.",
                 f"        public static let errorName = \"{name}\""]
    out += indented(enums + properties, "        ")
    out += ["", "        /// Memberwise initializer" + (" (the reason is made from the other fields)." if reason and has_reason else ".")]
    out += wrapped("public init(", [text for _, text in parameters], ") {", "        ", WIDTH - 8)
    out += [f"            self.{field} = {field}" for field, _ in parameters]
    if reason and has_reason:
        out.append(f"            self.reason = {reason}")
    out.append("        }")
    if reason and not has_reason:
        out += ["", "        /// Why, in words, and what to do.", f"        public var reason: String {{ {reason} }}"]
    out.append("    }")
    return out


def emit_failure(errors, interface, swift_name):
    cases = [(name[:1].lower() + name[1:], name) for name, _ in errors]
    out = [f"    /// An error of {interface}, typed: what the daemon throws and what a client decodes",
           "    /// (``init(_:)``) from a ``VarlinkError``.",
           "    public enum Failure: VarlinkErrorConvertible, Hashable, CustomStringConvertible {"]
    out += [f"        case {case}({name})" for case, name in cases]
    out += ["", "        /// The error as it goes on the wire.", "        public var varlinkError: VarlinkError {", "            switch self {"]
    out += [f"            case .{case}(let parameters): {swift_name}.varlinkError(parameters)" for case, _ in cases]
    out += ["            }", "        }", "", f"        /// The typed error of a reply; nil when `error` is not an {interface} error.",
            "        public init?(_ error: VarlinkError) {", "            switch error.name {"]
    for case, name in cases:
        out += [f"            case \"{interface}.{name}\":",
                f"                guard let parameters = {swift_name}.parameters({name}.self, of: error) else {{ return nil }}",
                f"                self = .{case}(parameters)"]
    out += ["            default: return nil", "            }", "        }", "", "        /// A description in words.",
            "        public var description: String { varlinkError.description }", "    }"]
    return out


def header(interface, what):
    return ["import Foundation", "", f"// Generated from varlink/{interface}.varlink and varlink/{interface}.swift.json:",
            f"// {what} Do not edit: change those files and run"] + DO_NOT_EDIT


def listing(name, doc, protocol, names):
    """`public static let NAME: [any PROTOCOL.Type] = [` with the names, one wrapped block, then `]`."""
    items = wrapped("", [f"{n}.self" for n in names], ",", "        ")
    return [f"    /// {doc}", f"    public static let {name}: [any {protocol}.Type] = ["] + items + ["    ]"]


def notes_of(interface):
    return json.load(open(os.path.join(ROOT, "varlink", f"{interface}.swift.json"), encoding="utf-8"))


def check_section(interface, notes, declared, what):
    for name in notes:
        if name not in declared:
            fail(f"{interface}.{name}: in {interface}.swift.json's {what}s, not a{'n' if what == 'error' else ''} {what} of the .varlink; remove it")


def generate_types(interface, swift_name, idl):
    notes = notes_of(interface)
    declared = {name for name, _ in idl.types}
    for name in notes:
        if name not in ("methods", "errors") and name not in declared:
            fail(f"{interface}.{name}: in {interface}.swift.json, not a type of the .varlink; remove it")
    out = header(interface, "the named types (`type …` in the IDL).") + [f"extension {swift_name} {{"]
    for index, (name, fields) in enumerate(idl.types):
        out += ([""] if index else []) + emit_type(name, fields, notes.get(name, {}), interface)
    return "\n".join(out + ["}"]) + "\n"


def generate_methods(interface, swift_name, idl):
    notes = notes_of(interface).get("methods", {})
    check_section(interface, notes, {name for name, _, _ in idl.methods}, "method")
    out = header(interface, "the methods (`method …` in the IDL), each with its Parameters and Reply.") + [f"extension {swift_name} {{"]
    out += listing("methods", "The interface's methods.", "VarlinkMethod", [name for name, _, _ in idl.methods])
    for name, parameters, reply in idl.methods:
        out += [""] + emit_method(name, parameters, reply, notes.get(name, {}), interface, swift_name)
    return "\n".join(out + ["}"]) + "\n"


def generate_errors(interface, swift_name, idl, idls):
    notes = notes_of(interface).get("errors", {})
    check_section(interface, notes, {name for name, _ in idl.errors}, "error")
    out = header(interface, "the errors (`error …` in the IDL) and the typed Failure.") + [f"extension {swift_name} {{"]
    out += listing("errors", "The interface's errors.", "VarlinkErrorParameters", [name for name, _ in idl.errors])
    for name, fields in idl.errors:
        out += [""] + emit_error(name, fields, notes.get(name, {}), interface, idls)
    out += [""] + emit_failure(idl.errors, interface, swift_name)
    return "\n".join(out + ["}"]) + "\n"


def main():
    global ROOT
    arguments = sys.argv[1:]
    check = "--check" in arguments
    if "--root" in arguments:
        ROOT = arguments[arguments.index("--root") + 1]
    idls = {swift_name: IDL(os.path.join(ROOT, "varlink", f"{interface}.varlink")) for interface, swift_name in INTERFACES}
    outputs = []
    for generator, suffix in [(generate_types, "Types"), (generate_methods, "Methods")]:
        outputs += [(f"{swift_name}+{suffix}.swift", generator(interface, swift_name, idls[swift_name])) for interface, swift_name in INTERFACES]
    outputs += [(f"{swift_name}+Errors.swift", generate_errors(interface, swift_name, idls[swift_name], idls)) for interface, swift_name in INTERFACES]
    stale = []
    for name, text in outputs:
        path = os.path.join(ROOT, "Sources", "StrataVarlink", "Interfaces", name)
        current = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if current == text:
            continue
        if check:
            stale.append(path)
        else:
            with open(path, "w", encoding="utf-8") as file:
                file.write(text)
    if stale:
        sys.exit("\n".join(f"{path} differs from varlink/: run scripts/generate-varlink-definitions.sh" for path in stale))


if __name__ == "__main__":
    main()
