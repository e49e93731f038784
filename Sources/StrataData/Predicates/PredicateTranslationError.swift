import Foundation

/// A `#Predicate` or `SortDescriptor` that Strata cannot translate to SQL: thrown before any
/// SQL runs, naming the operator (or key path) and the model. Strata never filters in memory.
public struct PredicateTranslationError: Error, Sendable, CustomStringConvertible {
    /// What could not be translated.
    public enum Code: String, Sendable, Hashable {
        /// An expression node with no SQL translation (arithmetic, a conditional, a cast…).
        case unsupportedOperator
        /// A key path that is not a persisted property (a computed or transient property,
        /// `first`, a string's `count`…).
        case unsupportedKeyPath
        /// A constant of a type that is not an attribute value.
        case unsupportedValue
    }

    /// What could not be translated.
    public var code: Code
    /// The model the predicate is over.
    public var model: String
    /// The operator (expression node) concerned, as Foundation names it.
    public var `operator`: String?
    /// Why, and what to do.
    public var reason: String

    /// An error about `model`.
    public init(_ code: Code, _ reason: String, model: String, operator: String? = nil) {
        self.code = code
        self.reason = reason
        self.model = model
        self.operator = `operator`
    }

    /// `#Predicate over 'Aircraft': …`.
    public var description: String { "#Predicate over '\(model)': \(reason)" }
}
