// CYaml is the libyaml that Yams bundles and builds; it is not a product of Yams, but its
// module is visible to every target that depends on Yams. Its event API is the only way to
// look at a YAML document without building (and, through aliases, expanding) its tree.
import CYaml

/// A pass over a YAML document's events, before Yams composes its tree, that refuses the
/// documents whose tree would be dangerous to build or walk:
///
/// - **alias bombs** — a few anchors and aliases that expand to billions of nodes
///   (`a: &a [x, x, …]`, `b: &b [*a, *a, …]`, …): the nodes a reader would visit, aliases
///   expanded, are counted, and counting stops at ``Limits/maxExpandedNodes``;
/// - **nesting** deeper than ``Limits/maxDepth`` (`[[[[…`), which would exhaust the stack of a
///   recursive reader.
///
/// It runs in time linear in the text and keeps only one number per anchor. Syntax errors are
/// left to Yams, which reports them with their line.
package enum YAMLPreflight {
    package struct Limits: Sendable, Hashable {
        /// Nested sequences and mappings.
        package var maxDepth: Int
        /// Nodes of the document with every alias expanded.
        package var maxExpandedNodes: Int

        package init(maxDepth: Int = 200, maxExpandedNodes: Int = 1_000_000) {
            self.maxDepth = maxDepth
            self.maxExpandedNodes = maxExpandedNodes
        }

        /// Model files, manifests, stage files and configuration files.
        package static let standard = Limits()
    }

    /// Why a document is refused; `line` is 1-based.
    package struct Refusal: Error, Sendable, Hashable {
        package var message: String
        package var line: Int
    }

    /// Throws when `text` nests too deep or expands to too many nodes.
    package static func check(_ text: String, limits: Limits = .standard) throws(Refusal) {
        var bytes = Array(text.utf8)
        if bytes.isEmpty { return }
        let refusal: Refusal? = bytes.withUnsafeMutableBufferPointer { buffer in
            var parser = yaml_parser_t()
            guard yaml_parser_initialize(&parser) == 1 else { return nil }
            defer { yaml_parser_delete(&parser) }
            yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var counter = Counter(limits: limits)
            var event = yaml_event_t()
            while true {
                // A syntax error ends the pass: Yams reports it with its own message, except
                // libyaml's own nesting limit, reported like ours (Yams would quote the line).
                guard yaml_parser_parse(&parser, &event) == 1 else {
                    guard let problem = parser.problem.map({ String(cString: $0) }), problem.contains("nesting level") else { return nil }
                    return Refusal(message: "lists and mappings are nested more than \(limits.maxDepth) levels deep; flatten the document",
                                   line: Int(parser.problem_mark.line) + 1)
                }
                defer { yaml_event_delete(&event) }
                let line = Int(event.start_mark.line) + 1
                switch event.type {
                case YAML_STREAM_END_EVENT:
                    return nil
                case YAML_SCALAR_EVENT:
                    if let refusal = counter.leaf(size: 1, anchor: name(event.data.scalar.anchor), line: line) { return refusal }
                case YAML_ALIAS_EVENT:
                    let size = name(event.data.alias.anchor).flatMap { counter.anchorSizes[$0] } ?? 1
                    if let refusal = counter.leaf(size: size, anchor: nil, line: line) { return refusal }
                case YAML_SEQUENCE_START_EVENT:
                    if let refusal = counter.open(anchor: name(event.data.sequence_start.anchor), line: line) { return refusal }
                case YAML_MAPPING_START_EVENT:
                    if let refusal = counter.open(anchor: name(event.data.mapping_start.anchor), line: line) { return refusal }
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                    counter.close()
                default:
                    break
                }
            }
        }
        if let refusal { throw refusal }
    }

    private static func name(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    /// The expanded size of every open collection and anchored node.
    private struct Counter {
        let limits: Limits
        var anchorSizes: [String: Int] = [:]
        /// Open collections: their anchor and expanded size so far.
        var open: [(anchor: String?, size: Int)] = []
        var total = 0

        init(limits: Limits) { self.limits = limits }

        /// A scalar (size 1) or an alias (the size of what it names), in the open collection.
        mutating func leaf(size: Int, anchor: String?, line: Int) -> Refusal? {
            if let anchor { anchorSizes[anchor] = size }
            if !open.isEmpty { open[open.count - 1].size += size }
            return count(size, line: line)
        }

        /// A sequence or mapping starts: it counts one node, its items count when they come.
        mutating func open(anchor: String?, line: Int) -> Refusal? {
            guard open.count < limits.maxDepth else {
                return Refusal(message: "lists and mappings are nested more than \(limits.maxDepth) levels deep; flatten the document", line: line)
            }
            open.append((anchor, 1))
            return count(1, line: line)
        }

        /// A collection ends: its whole size goes to the collection around it.
        mutating func close() {
            guard let closed = open.popLast() else { return }
            if let anchor = closed.anchor { anchorSizes[anchor] = closed.size }
            if !open.isEmpty { open[open.count - 1].size += closed.size }
        }

        /// Counts `size` more nodes in the whole document.
        private mutating func count(_ size: Int, line: Int) -> Refusal? {
            total += size
            guard total <= limits.maxExpandedNodes else {
                return Refusal(message: "the document expands to more than \(limits.maxExpandedNodes) nodes with its aliases (*name) resolved — an alias bomb, or a file far larger than any model; use fewer aliases", line: line)
            }
            return nil
        }
    }
}
