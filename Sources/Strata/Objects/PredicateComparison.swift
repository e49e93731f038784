import Foundation

/// String comparison options: `[c]`, `[d]`, `[cd]`.
public struct PredicateOptions: OptionSet, Sendable, Hashable {
    /// The option bits.
    public let rawValue: Int
    /// Options from their bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `[c]`: case-insensitive (Unicode case folding, not just ASCII).
    public static let caseInsensitive = PredicateOptions(rawValue: 1)
    /// `[d]`: diacritic-insensitive (`"Café" ==[d] "Cafe"`).
    public static let diacriticInsensitive = PredicateOptions(rawValue: 2)

    /// `[c]`, `[d]`, `[cd]` or an empty string.
    public var formatSuffix: String {
        let letters = (contains(.caseInsensitive) ? "c" : "") + (contains(.diacriticInsensitive) ? "d" : "")
        return letters.isEmpty ? "" : "[\(letters)]"
    }
}

/// `ANY`/`SOME`, `ALL`, `NONE` before a comparison.
public enum PredicateModifier: String, Sendable, Hashable {
    /// No modifier. A to-many keypath on the left is implicitly `ANY`, like Core Data's SQL store.
    case direct = ""
    case any = "ANY"
    case all = "ALL"
    case none = "NONE"
}

/// `modifier left op[options] right`.
public struct PredicateComparison: Sendable, Hashable {
    /// `ANY`, `ALL`, `NONE` or direct.
    public var modifier: PredicateModifier
    /// The left operand (usually a key path).
    public var left: PredicateOperand
    /// The comparison.
    public var `operator`: PredicateOperator
    /// `[c]`, `[d]`: case and diacritic insensitivity.
    public var options: PredicateOptions
    /// The right operand.
    public var right: PredicateOperand
    /// Where the comparison came from, for error messages. Not part of equality.
    public var source: PredicateSource

    /// A comparison of `left` and `right`.
    public init(
        _ left: PredicateOperand, _ op: PredicateOperator, _ right: PredicateOperand, options: PredicateOptions = [],
        modifier: PredicateModifier = .direct, source: PredicateSource = PredicateSource()
    ) {
        self.modifier = modifier
        self.left = left
        self.operator = op
        self.options = options
        self.right = right
        self.source = source
    }
}

extension PredicateComparison: CustomStringConvertible {
    /// The operator as the format writes it.
    public var description: String {
        let prefix = modifier == .direct ? "" : modifier.rawValue + " "
        return "\(prefix)\(left) \(self.operator.rawValue)\(options.formatSuffix) \(right)"
    }
}
