import Foundation

/// The operator of a comparison.
public enum PredicateOperator: String, Sendable, Hashable, CaseIterable {
    /// `==`, `=`: equal (`nil` compiles to `IS NULL`).
    case equalTo = "=="
    /// `!=`, `<>`: not equal, null-safe (`IS NOT`).
    case notEqualTo = "!="
    /// `<`
    case lessThan = "<"
    /// `<=`, `=<`
    case lessThanOrEqualTo = "<="
    /// `>`
    case greaterThan = ">"
    /// `>=`, `=>`
    case greaterThanOrEqualTo = ">="
    /// `BETWEEN {low, high}`: inclusive range.
    case between = "BETWEEN"
    /// `IN {…}`, `IN %@`, or `value IN toManyKeyPath`.
    case `in` = "IN"
    /// `BEGINSWITH`: string prefix.
    case beginsWith = "BEGINSWITH"
    /// `ENDSWITH`: string suffix.
    case endsWith = "ENDSWITH"
    /// `CONTAINS`: substring, or (on a to-many relationship) a related object's primary key.
    case contains = "CONTAINS"
    /// `LIKE`: whole-string wildcard match with `*` and `?`.
    case like = "LIKE"
    /// `MATCHES`: whole-string ICU regular expression match.
    case matches = "MATCHES"

    /// Whether the operator compares strings (and needs string operands).
    public var isStringOperator: Bool {
        switch self {
        case .beginsWith, .endsWith, .contains, .like, .matches: return true
        default: return false
        }
    }

    /// The operator that gives the same result with the operands swapped, if any.
    var swapped: PredicateOperator? {
        switch self {
        case .equalTo, .notEqualTo: return self
        case .lessThan: return .greaterThan
        case .lessThanOrEqualTo: return .greaterThanOrEqualTo
        case .greaterThan: return .lessThan
        case .greaterThanOrEqualTo: return .lessThanOrEqualTo
        default: return nil
        }
    }
}
