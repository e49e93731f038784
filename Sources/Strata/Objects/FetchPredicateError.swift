import Foundation

/// A problem with a predicate, a sort descriptor or a fetch request: a syntax error found while
/// parsing a format string, or a semantic error found while compiling it against a model
/// (unknown entity or keypath, an operator that does not apply to a type, a to-many keypath
/// where a single value is needed, …).
///
/// ``description`` shows the format with a caret under the problem and says what to do:
///
/// ```text
/// expected a value after '==': add a literal, a %@ argument or a keypath (at offset 8)
///     name ==
///             ^
/// ```
///
/// Argument values are never part of the message.
public struct FetchPredicateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong with the predicate.
    public enum Code: String, Sendable, Hashable {
        /// The format does not follow the grammar.
        case syntax
        /// A `%@`/`%K`/`%d` specifier has no argument.
        case missingArgument
        /// More arguments were given than the format has specifiers.
        case extraArgument
        /// An argument does not fit its specifier (`%K` with a non-string, `%d` with a string…).
        case invalidArgument
        /// A construct of Apple's syntax that Strata does not support (SUBQUERY, $variables…).
        case unsupported
        /// The fetch request names an entity the model does not have.
        case unknownEntity
        /// A keypath names no attribute, composite leaf or relationship.
        case unknownKeyPath
        /// A value cannot be compared with a keypath of that type.
        case typeMismatch
        /// The operator (or option) does not apply to the operands' type.
        case invalidOperator
        /// ANY/ALL/NONE or a collection operator used on something that is not to-many, or a
        /// to-many keypath used where a single value is needed.
        case invalidAggregate
        /// The fetch request itself is invalid (a negative limit or offset).
        case invalidRequest
        /// The predicate, a keypath or the request goes past one of the ``PredicateLimits``
        /// (nesting depth, length, keypath components, joined tables, sort keys, bound values);
        /// the message names the limit.
        case limitExceeded
    }

    /// What is wrong.
    public var code: Code
    /// The predicate format (or sort keypath) the problem is in; empty when there is none.
    public var format: String
    /// UTF-8 offset of the problem in ``format``, when it is known.
    public var position: Int?
    /// What is wrong and what to do.
    public var reason: String
    /// The entity the predicate was compiled for, for semantic errors.
    public var entity: String?
    /// The keypath at fault, for semantic errors.
    public var keyPath: String?

    /// An error at `offset` of the predicate's format (nil when it is not about one place).
    public init(
        _ code: Code, _ reason: String, format: String = "", position: Int? = nil, entity: String? = nil,
        keyPath: String? = nil
    ) {
        self.code = code
        self.reason = reason
        self.format = format
        self.position = position
        self.entity = entity
        self.keyPath = keyPath
    }

    /// The reason, the offset, and the format with a caret under the offending position.
    public var description: String {
        var text = reason
        guard !format.isEmpty else { return text }
        let shown = format.map { $0.isNewline || $0 == "\t" ? " " : $0 }
        guard let position else {
            return text + "\n    " + String(shown)
        }
        text += " (at offset \(position))"
        // The caret sits under the character that starts at the UTF-8 offset.
        let utf8 = Array(format.utf8)
        let prefix = String(decoding: utf8.prefix(min(position, utf8.count)), as: UTF8.self)
        return text + "\n    " + String(shown) + "\n    " + String(repeating: " ", count: prefix.count) + "^"
    }
}

// MARK: - Suggestions

extension FetchPredicateError {
    /// Names among `candidates` close to `name` (edit distance, case-insensitive), best first.
    static func suggestions(for name: String, in candidates: [String]) -> [String] {
        let lowered = name.lowercased()
        let scored = candidates.map { candidate -> (String, Int) in
            let c = candidate.lowercased()
            let distance = editDistance(Array(lowered), Array(c))
            let bonus = c.hasPrefix(lowered) || lowered.hasPrefix(c) ? -1 : 0
            return (candidate, distance + bonus)
        }
        let limit = max(2, name.count / 3)
        return scored.filter { $0.1 <= limit }.sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(3).map(\.0)
    }

    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// `; did you mean 'name' or 'names'?`, or an empty string.
    static func didYouMean(_ suggestions: [String]) -> String {
        guard !suggestions.isEmpty else { return "" }
        let quoted = suggestions.map { "'\($0)'" }
        let list = quoted.count == 1 ? quoted[0] : quoted.dropLast().joined(separator: ", ") + " or " + quoted.last!
        return "; did you mean \(list)?"
    }
}
