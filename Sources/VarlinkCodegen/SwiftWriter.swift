import Foundation

/// The Swift text of one interface's types, methods and errors, from its `.varlink` file and its
/// notes. The layout (line width, wrapping, doc lines) is fixed, so the same inputs give the same
/// files byte for byte.
struct SwiftWriter {
    /// The Varlink interface (`io.strata.Admin`).
    let interface: String
    /// Its Swift namespace (`StrataAdmin`).
    let swiftName: String
    let idl: IDLFile
    let notes: Notes
    /// Every interface's IDL by Swift name, for an error `alias` to another interface.
    let idls: [String: IDLFile]

    static let width = 140
    static let scalars = ["string": "String", "int": "Int", "float": "Double", "bool": "Bool", "object": "JSONValue"]

    // MARK: - The three files

    /// `StrataAdmin+Definition.swift`: the interface's name and its definition, `text` (the
    /// `.varlink` file, trailing blanks removed) as a raw string literal.
    func definition(_ text: String) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            String($0).replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        while lines.last == "" { lines.removeLast() }
        return file("the interface's name and definition.", declarations: [
            ["    /// The name on the wire.", "    public static let name = \"\(interface)\"",
             "    /// The interface definition (the `.varlink` file), served by `org.varlink.service.GetInterfaceDescription`.",
             "    public static let definition = #\"\"\""] + lines.map { $0.isEmpty ? $0 : "        " + $0 } + ["        \"\"\"#"],
        ])
    }

    /// `StrataAdmin+Types.swift`: the named types (`type …`).
    func types() throws -> String {
        let declared = Set(idl.types.map(\.name))
        for name in notes.keys where name != "methods" && name != "errors" && !declared.contains(name) {
            throw CodegenError("\(interface).\(name): in \(interface).swift.json, not a type of the .varlink; remove it")
        }
        return try file("the named types (`type …` in the IDL).", declarations: idl.types.enumerated().map { index, type in
            (index > 0 ? [""] : []) + (try structure(type.name, type.fields, notes[type.name], indent: "    "))
        })
    }

    /// `StrataAdmin+Methods.swift`: each method with its `Parameters` and `Reply`, and `methods`.
    func methods() throws -> String {
        let methodNotes = notes["methods"]
        try checkSection(methodNotes, declared: Set(idl.methods.map(\.name)), what: "method")
        let list = listing("methods", doc: "The interface's methods.", protocol: "VarlinkMethod", names: idl.methods.map(\.name))
        return try file("the methods (`method …` in the IDL), each with its Parameters and Reply.", declarations: [list] + idl.methods.map {
            [""] + (try method($0.name, $0.parameters, $0.reply, methodNotes[$0.name]))
        })
    }

    /// `StrataAdmin+Errors.swift`: each error's parameters, `errors` and the typed `Failure`.
    func errors() throws -> String {
        let errorNotes = notes["errors"]
        try checkSection(errorNotes, declared: Set(idl.errors.map(\.name)), what: "error")
        let list = listing("errors", doc: "The interface's errors.", protocol: "VarlinkErrorParameters", names: idl.errors.map(\.name))
        return try file("the errors (`error …` in the IDL) and the typed Failure.", declarations: [list] + idl.errors.map {
            [""] + (try error($0.name, $0.fields, errorNotes[$0.name]))
        } + [[""] + failure()])
    }

    /// A generated file: the header saying `what` it holds, then the declarations in an
    /// extension of the interface's namespace.
    private func file(_ what: String, declarations: [[String]]) -> String {
        let lines = header(what) + ["extension \(swiftName) {"] + declarations.flatMap { $0 } + ["}"]
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Declarations

    private func structure(_ name: String, _ fields: [IDLField], _ notes: Notes, indent: String, at: String? = nil) throws -> [String] {
        let at = at ?? "\(interface).\(name)"
        try check(fields, notes, at: at)
        let (enums, properties, parameters) = try fieldLines(fields, notes, at: at)
        var out = notes.doc(or: ["`\(name)` of \(interface)."]).map { "/// \($0)" }
        out.append("public struct \(name): Codable, Sendable, Hashable {")
        out += Self.indented(enums + properties, "    ")
        out += ["", "    /// Memberwise initializer."]
        out += Self.wrapped(head: "public init(", parameters.map(\.text), tail: ") {", indent: "    ", width: Self.width - indent.count)
        out += fields.map { "        self.\($0.name) = \($0.name)" }
        out += ["    }", "}"]
        return Self.indented(out, indent)
    }

    private func method(_ name: String, _ parameters: [IDLField], _ reply: [IDLField], _ notes: Notes) throws -> [String] {
        let at = "\(interface).\(name)"
        var out = notes.doc(or: ["`\(name)` of \(interface)."]).map { "    /// \($0)" }
        out += ["    public enum \(name): VarlinkMethod {", "        /// The interface this belongs to.",
                "        public typealias Interface = \(swiftName)", "        /// The name on the wire.",
                "        public static let name = \"\(name)\""]
        if parameters.isEmpty {
            out += ["        /// The method takes no parameters.", "        public typealias Parameters = VarlinkEmpty"]
        } else {
            out += [""] + (try structure("Parameters", parameters, Notes(["doc": ["What the method takes."]]).merging(notes["parameters"]),
                                         indent: "        ", at: "\(at) parameters"))
        }
        out.append("")
        if let alias = notes.string("replyAlias") {
            out += ["        /// What the method replies.", "        public typealias Reply = \(alias)"]
        } else if reply.isEmpty {
            out += ["        /// The method replies with no fields.", "        public typealias Reply = VarlinkEmpty"]
        } else {
            out += try structure("Reply", reply, Notes(["doc": ["What the method replies."]]).merging(notes["reply"]),
                                 indent: "        ", at: "\(at) reply")
        }
        out.append("    }")
        return out
    }

    private func error(_ name: String, _ fields: [IDLField], _ notes: Notes) throws -> [String] {
        let at = "\(interface).\(name)"
        try check(fields, notes, at: at)
        let doc = notes.doc(or: ["`\(interface).\(name)`."]).map { "    /// \($0)" }
        if let alias = notes.string("alias") {
            let (otherSwift, otherName) = Self.split(alias)
            let otherFields = idls[otherSwift]?.errors.first { $0.name == otherName }?.fields
            if otherFields != fields {
                let shown = otherFields.map { "(" + $0.map { "\($0.name): \($0.type.text)" }.joined(separator: ", ") + ")" } ?? "none"
                throw CodegenError("\(at): the alias \(alias) has other fields in its .varlink: \(shown); give the error its own type")
            }
            return doc + ["    public typealias \(name) = \(alias)"]
        }
        let reason = notes.string("reason")
        let hasReason = fields.contains { $0.name == "reason" }
        if reason == nil && !hasReason {
            throw CodegenError("\(at): an error without a `reason` field needs \"reason\" (a Swift expression) in the .swift.json")
        }
        var (enums, properties, parameters) = try fieldLines(fields, notes, at: at)
        if reason != nil && hasReason {
            parameters.removeAll { $0.field == "reason" }
        }
        var out = doc + ["    public struct \(name): VarlinkErrorParameters {", "        /// The error's name on the wire.",
                         "        public static let errorName = \"\(name)\""]
        out += Self.indented(enums + properties, "        ")
        out += ["", "        /// Memberwise initializer" + (reason != nil && hasReason ? " (the reason is made from the other fields)." : ".")]
        out += Self.wrapped(head: "public init(", parameters.map(\.text), tail: ") {", indent: "        ", width: Self.width - 8)
        out += parameters.map { "            self.\($0.field) = \($0.field)" }
        if let reason, hasReason {
            out.append("            self.reason = \(reason)")
        }
        out.append("        }")
        if let reason, !hasReason {
            out += ["", "        /// Why, in words, and what to do.", "        public var reason: String { \(reason) }"]
        }
        out.append("    }")
        return out
    }

    private func failure() -> [String] {
        let cases = idl.errors.map { (case: $0.name.prefix(1).lowercased() + $0.name.dropFirst(), name: $0.name) }
        var out = ["    /// An error of \(interface), typed: what the daemon throws and what a client decodes",
                   "    /// (``init(_:)``) from a ``VarlinkError``.",
                   "    public enum Failure: VarlinkErrorConvertible, Hashable, CustomStringConvertible {"]
        out += cases.map { "        case \($0.case)(\($0.name))" }
        out += ["", "        /// The error as it goes on the wire.", "        public var varlinkError: VarlinkError {", "            switch self {"]
        out += cases.map { "            case .\($0.case)(let parameters): \(swiftName).varlinkError(parameters)" }
        out += ["            }", "        }", "", "        /// The typed error of a reply; nil when `error` is not an \(interface) error.",
                "        public init?(_ error: VarlinkError) {", "            switch error.name {"]
        for (name, type) in cases {
            out += ["            case \"\(interface).\(type)\":",
                    "                guard let parameters = \(swiftName).parameters(\(type).self, of: error) else { return nil }",
                    "                self = .\(name)(parameters)"]
        }
        out += ["            default: return nil", "            }", "        }", "", "        /// A description in words.",
                "        public var description: String { varlinkError.description }", "    }"]
        return out
    }

    // MARK: - Fields

    /// The nested enums of enum-typed fields, the stored properties, and the initializer's
    /// parameters (`name: Type = default`).
    private func fieldLines(_ fields: [IDLField], _ notes: Notes, at: String) throws
        -> (enums: [String], properties: [String], parameters: [(field: String, text: String)]) {
        var enums: [String] = [], properties: [String] = [], parameters: [(field: String, text: String)] = []
        for field in fields {
            let note = notes["fields"][field.name]
            let cases = field.type.enumCases
            let enumNote = note["enum"]
            if !enumNote.isEmpty && cases == nil {
                throw CodegenError("\(at).\(field.name): the .swift.json gives an enum, the .varlink's type '\(field.type.text)' has none")
            }
            let enumName = cases == nil ? nil : (enumNote.string("name") ?? field.name.prefix(1).uppercased() + field.name.dropFirst())
            var spelled = try Self.swiftType(field.type, at: "\(at).\(field.name)", enumName: enumName)
            if let cases {
                if note.has("swift") {
                    throw CodegenError("\(at).\(field.name): an enum field takes \"enum\": {\"name\": …} in the .swift.json, not \"swift\"")
                }
                enums += ["/// \(enumNote.string("doc") ?? "The values of `\(field.name)`.")",
                          "public enum \(enumName ?? ""): String, VarlinkStringEnum {", "    case \(cases.joined(separator: ", "))", "}", ""]
            } else if let swift = note.string("swift") {
                if swift.hasSuffix("?") != spelled.hasSuffix("?") {
                    throw CodegenError("\(at).\(field.name): the .swift.json type '\(swift)' and the IDL's '\(field.type.text)' differ in optionality")
                }
                spelled = swift
            }
            properties += ["/// \(note.string("doc") ?? "The `\(field.name)` field.")", "public var \(field.name): \(spelled)"]
            let text = "\(field.name): \(spelled)" + (notes["defaults"].string(field.name).map { " = \($0)" } ?? "")
            parameters.append((field.name, text))
        }
        return (enums, properties, parameters)
    }

    /// Notes about fields the IDL does not declare are refused (the two must not drift apart).
    private func check(_ fields: [IDLField], _ notes: Notes, at: String) throws {
        let known = Set(fields.map(\.name))
        for key in ["fields", "defaults"] {
            for field in notes[key].keys where !known.contains(field) {
                throw CodegenError("\(at).\(field): in the .swift.json, not in the .varlink; remove it or add the field")
            }
        }
        if notes.has("enums") {
            throw CodegenError("\(at): 'enums' in the .swift.json: the cases are the .varlink's now; declare the field as `(a, b, c)` "
                               + "and give its Swift name and doc as the field's \"enum\": {\"name\": …, \"doc\": …}")
        }
    }

    private func checkSection(_ notes: Notes, declared: Set<String>, what: String) throws {
        for name in notes.keys where !declared.contains(name) {
            throw CodegenError("\(interface).\(name): in \(interface).swift.json's \(what)s, not a\(what == "error" ? "n" : "") \(what) of the .varlink; remove it")
        }
    }

    /// The Swift spelling of an IDL type: `?T` → `T?`, `[]T` → `[T]`, `[string]T` → `[String: T]`,
    /// an enum → its name.
    static func swiftType(_ type: IDLType, at: String, enumName: String?) throws -> String {
        switch type {
        case .optional(let inner): return try swiftType(inner, at: at, enumName: enumName) + "?"
        case .array(let inner): return "[" + (try swiftType(inner, at: at, enumName: enumName)) + "]"
        case .map(let inner): return "[String: " + (try swiftType(inner, at: at, enumName: enumName)) + "]"
        case .enumeration: return enumName ?? ""
        case .name(let name):
            if let scalar = scalars[name] { return scalar }
            if let first = name.unicodeScalars.first, ("A"..."Z").contains(first),
               name.unicodeScalars.allSatisfy({ $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }) {
                return name
            }
            throw CodegenError("\(at): the IDL type '\(name)' has no Swift spelling here; add it to the scalars or name the type")
        }
    }

    // MARK: - Layout

    private func header(_ what: String) -> [String] {
        ["import Foundation", "", "// Generated from varlink/\(interface).varlink and varlink/\(interface).swift.json:",
         "// \(what) Do not edit: change those files;"] + Generator.doNotEdit
    }

    private func listing(_ name: String, doc: String, protocol: String, names: [String]) -> [String] {
        let items = Self.wrapped(head: "", names.map { "\($0).self" }, tail: ",", indent: "        ", width: Self.width)
        return ["    /// \(doc)", "    public static let \(name): [any \(`protocol`).Type] = ["] + items + ["    ]"]
    }

    /// `head` + the items joined by ", " + `tail`, wrapped at `width` with continuation lines
    /// aligned after `head`.
    static func wrapped(head: String, _ items: [String], tail: String, indent: String, width: Int) -> [String] {
        guard !items.isEmpty else { return [indent + head + tail] }
        var lines: [String] = [], line = indent + head
        for (index, item) in items.enumerated() {
            let piece = item + (index < items.count - 1 ? ", " : tail)
            let trimmed = piece.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
            if line.unicodeScalars.count + trimmed.unicodeScalars.count > width
                && line.trimmingCharacters(in: .whitespaces) != head.trimmingCharacters(in: .whitespaces) {
                lines.append(line.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression))
                line = indent + String(repeating: " ", count: head.count) + piece
            } else {
                line += piece
            }
        }
        lines.append(line)
        return lines
    }

    static func indented(_ lines: [String], _ indent: String) -> [String] {
        lines.map { $0.isEmpty ? $0 : indent + $0 }
    }

    private static func split(_ alias: String) -> (String, String) {
        guard let dot = alias.firstIndex(of: ".") else { return (alias, "") }
        return (String(alias[..<dot]), String(alias[alias.index(after: dot)...]))
    }
}
