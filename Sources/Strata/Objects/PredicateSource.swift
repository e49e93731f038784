import Foundation

/// The format a comparison was parsed from and the UTF-8 offsets of its parts, so that a
/// semantic error found at compile time can point into the original format.
///
/// Two sources always compare equal and hash alike: a predicate's identity is its tree, not
/// the text it was written in.
public struct PredicateSource: Sendable, Hashable {
    /// The predicate's format text.
    public var format: String
    /// Where the left operand starts in ``format``.
    public var leftOffset: Int?
    /// Where the operator starts in ``format``.
    public var operatorOffset: Int?
    /// Where the right operand starts in ``format``.
    public var rightOffset: Int?

    /// A position in a predicate's format (for error messages).
    public init(format: String = "", leftOffset: Int? = nil, operatorOffset: Int? = nil, rightOffset: Int? = nil) {
        self.format = format
        self.leftOffset = leftOffset
        self.operatorOffset = operatorOffset
        self.rightOffset = rightOffset
    }

    /// Always equal: where a comparison came from does not change what it means.
    public static func == (lhs: PredicateSource, rhs: PredicateSource) -> Bool { true }
    /// Hashes nothing (see `==`).
    public func hash(into hasher: inout Hasher) {}
}
