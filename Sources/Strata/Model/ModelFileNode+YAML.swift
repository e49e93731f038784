import Foundation
import Yams

// MARK: - Reading

extension ModelFileNode {
    /// Parses the first YAML document of `text`. Plain scalars stay uninterpreted
    /// (``Content/plain``); quoted and block scalars are strings. Aliases are expanded;
    /// duplicate keys are an error. A document nested too deep or expanding to too many
    /// nodes (an alias bomb) is refused before Yams builds it (``YAMLPreflight``).
    static func parseYAML(_ text: String) throws(ModelFileSyntaxError) -> ModelFileNode {
        do {
            try YAMLPreflight.check(text)
        } catch {
            throw ModelFileSyntaxError(message: error.message, line: error.line)
        }
        let root: Node?
        do {
            // The basic resolver: the decoder interprets plain scalars itself, and the default
            // resolver's regular expressions (run on every mapping key Yams hashes) were most
            // of the time spent reading a large model.
            root = try Yams.compose(yaml: text, .basic)
        } catch let error as YamlError {
            throw ModelFileSyntaxError(message: "invalid YAML: \(Self.describe(error))", line: Self.line(of: error))
        } catch {
            throw ModelFileSyntaxError(message: "invalid YAML: \(error)", line: nil)
        }
        guard let root else { return ModelFileNode(.null, line: 1) }
        return try convert(root, depth: 0)
    }

    private static func convert(_ node: Node, depth: Int) throws(ModelFileSyntaxError) -> ModelFileNode {
        guard depth < 200 else { throw ModelFileSyntaxError(message: "nesting is too deep", line: node.mark?.line) }
        let line = node.mark?.line
        switch node {
        case .scalar(let scalar):
            if scalar.style == .plain || scalar.style == .any {
                return ModelFileNode(.plain(scalar.string), line: line)
            }
            return ModelFileNode(.string(scalar.string), line: line)
        case .sequence(let sequence):
            var items: [ModelFileNode] = []
            for item in sequence { items.append(try convert(item, depth: depth + 1)) }
            return ModelFileNode(.array(items), line: line)
        case .mapping(let mapping):
            var pairs: [(key: String, value: ModelFileNode)] = []
            var seen: Set<String> = []
            for (key, value) in mapping {
                guard case .scalar(let k) = key else {
                    throw ModelFileSyntaxError(message: "a mapping key must be a plain name, not a list or mapping", line: key.mark?.line)
                }
                guard seen.insert(k.string).inserted else {
                    throw ModelFileSyntaxError(message: "duplicate key '\(k.string)'", line: key.mark?.line)
                }
                pairs.append((k.string, try convert(value, depth: depth + 1)))
            }
            return ModelFileNode(.object(pairs), line: line)
        case .alias:
            throw ModelFileSyntaxError(message: "unresolved YAML alias", line: line)
        }
    }

    private static func line(of error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _): return mark.line
        case .duplicatedKeysInMapping(_, let context): return context.mark.line
        default: return nil
        }
    }

    private static func describe(_ error: YamlError) -> String {
        switch error {
        case .scanner(let context, let problem, _, _), .parser(let context, let problem, _, _),
             .composer(let context, let problem, _, _):
            return [context?.text, problem].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        case .duplicatedKeysInMapping(let duplicates, _):
            return "duplicate key \(duplicates.map { "'\($0)'" }.joined(separator: ", "))"
        default:
            return "\(error)"
        }
    }
}

// MARK: - Writing

extension ModelFileNode {
    /// Block-style YAML with mapping keys sorted, two-space indentation, lists of scalars in
    /// flow style (`[a, b]`), and strings quoted whenever a YAML reader could take them for
    /// something else.
    func yamlText() -> String {
        var out = ""
        switch content {
        case .object(let pairs) where !pairs.isEmpty:
            Self.writeYAMLPairs(pairs, indent: "", into: &out)
        default:
            out = yamlInline() + "\n"
        }
        return out
    }

    private static func writeYAMLPairs(_ pairs: [(key: String, value: ModelFileNode)], indent: String, into out: inout String, firstPrefix: String? = nil) {
        for (i, pair) in pairs.sorted(by: { $0.key < $1.key }).enumerated() {
            out += (i == 0 ? firstPrefix ?? indent : indent) + yamlScalar(pair.key) + ":"
            pair.value.writeYAMLValue(indent: indent, into: &out)
        }
    }

    /// Writes the value after `key:` (on the same line when inline, else on the next lines).
    private func writeYAMLValue(indent: String, into out: inout String) {
        switch content {
        case .object(let pairs) where !pairs.isEmpty:
            out += "\n"
            Self.writeYAMLPairs(pairs, indent: indent + "  ", into: &out)
        case .array(let items) where !items.isEmpty && !items.allSatisfy(\.isScalar):
            out += "\n"
            for item in items { item.writeYAMLItem(indent: indent + "  ", into: &out) }
        default:
            out += " " + yamlInline() + "\n"
        }
    }

    /// Writes `- item` at `indent`.
    private func writeYAMLItem(indent: String, into out: inout String) {
        switch content {
        case .object(let pairs) where !pairs.isEmpty:
            Self.writeYAMLPairs(pairs, indent: indent + "  ", into: &out, firstPrefix: indent + "- ")
        case .array(let items) where !items.isEmpty && !items.allSatisfy(\.isScalar):
            out += indent + "-\n"
            for item in items { item.writeYAMLItem(indent: indent + "  ", into: &out) }
        default:
            out += indent + "- " + yamlInline() + "\n"
        }
    }

    /// A scalar, an empty collection or a flow list of scalars.
    private func yamlInline() -> String {
        switch content {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return n
        case .string(let s), .plain(let s): return Self.yamlScalar(s)
        case .array(let items): return "[" + items.map { $0.yamlInline() }.joined(separator: ", ") + "]"
        case .object: return "{}"
        }
    }

    private static let reservedWords: Set<String> = [
        "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~",
    ]

    /// A string as a plain scalar when that is unambiguous, double-quoted otherwise.
    static func yamlScalar(_ s: String) -> String {
        guard let first = s.unicodeScalars.first, let last = s.unicodeScalars.last,
              first.isASCIILetter || first == "_", last != " ",
              !reservedWords.contains(s.lowercased()), !s.contains(" #"),
              s.unicodeScalars.allSatisfy({
                  $0.isASCIILetter || ("0"..."9").contains($0) || $0 == "_" || $0 == "." || $0 == "-" || $0 == " " || $0 == "/"
              })
        else { return s.jsonQuoted }
        return s
    }
}
