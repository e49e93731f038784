import Foundation

/// A value that can be passed to a predicate format: for `%@`, `%d`, `%f` (a constant), `%K`
/// (a `String` naming a keypath), or, for arrays and sets, the list of `IN` and `BETWEEN`.
///
/// Every ``ValueConvertible`` type is an argument (`String`, the integer types, `Double`,
/// `Float`, `Decimal`, `Bool`, `Date`, `Data`, `UUID`, `URL`, ``Value``), as are optionals,
/// arrays and sets of arguments.
///
/// ```swift
/// try FetchPredicate(format: "tailNumber IN %@", ["F-GSPT", "F-HBXA"])
/// try FetchPredicate(format: "%K BETWEEN %@", "flightHours", [100, 200])
/// ```
public protocol PredicateArgument: Sendable {
    /// The argument as a predicate operand: `.value` for a single value, `.list` for a collection.
    var predicateOperand: PredicateOperand { get }
}

extension PredicateArgument where Self: ValueConvertible {
    /// The value as a predicate operand.
    public var predicateOperand: PredicateOperand { .value(strataValue) }
}

extension Value: PredicateArgument {}
extension String: PredicateArgument {}
extension Substring: PredicateArgument {}
extension Int: PredicateArgument {}
extension Int16: PredicateArgument {}
extension Int32: PredicateArgument {}
extension Int64: PredicateArgument {}
extension Double: PredicateArgument {}
extension Float: PredicateArgument {}
extension Decimal: PredicateArgument {}
extension Bool: PredicateArgument {}
extension Date: PredicateArgument {}
extension Data: PredicateArgument {}
extension UUID: PredicateArgument {}
extension URL: PredicateArgument {}

extension Optional: PredicateArgument where Wrapped: PredicateArgument {
    /// The value, or `nil` (SQL `NULL`).
    public var predicateOperand: PredicateOperand { self?.predicateOperand ?? .value(.null) }
}

extension Array: PredicateArgument where Element: PredicateArgument {
    /// The elements as a list (for `IN`).
    public var predicateOperand: PredicateOperand { .list(map(\.predicateOperand)) }
}

extension Set: PredicateArgument where Element: PredicateArgument {
    /// The elements in a stable order (by their format rendering), so that equal sets give
    /// equal predicates and the same SQL.
    public var predicateOperand: PredicateOperand {
        .list(map(\.predicateOperand).sorted { $0.description < $1.description })
    }
}

extension ContiguousArray: PredicateArgument where Element: PredicateArgument {
    /// The elements as a list (for `IN`).
    public var predicateOperand: PredicateOperand { .list(map(\.predicateOperand)) }
}

/// A heterogeneous list argument: `PredicateList([1, "two", nil as String?])`.
public struct PredicateList: PredicateArgument, Hashable {
    /// The operands of the list.
    public var elements: [PredicateOperand]
    /// A list of mixed arguments.
    public init(_ elements: [any PredicateArgument]) { self.elements = elements.map(\.predicateOperand) }
    /// The list as an operand.
    public var predicateOperand: PredicateOperand { .list(elements) }
}

extension PredicateOperand: PredicateArgument {
    /// The operand itself.
    public var predicateOperand: PredicateOperand { self }
}
