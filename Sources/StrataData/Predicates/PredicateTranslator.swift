import Foundation

/// Translates Foundation's `Predicate<T>` (the typed `PredicateExpressions` tree `#Predicate`
/// builds) and `SortDescriptor<T>` into Strata's ``FetchPredicate`` and
/// ``FetchSortDescriptor``: the tree the predicate-format parser builds, so that the SQL is
/// the one the string-keyed API compiles (parameterized, joins for to-one key paths,
/// `EXISTS`/`COUNT` subqueries for to-many ones).
///
/// Each expression node type translates itself (``StrataPredicateNode``, one small
/// conformance per `PredicateExpressions` type); a node without one is a
/// ``PredicateTranslationError`` naming it and the model, before any SQL runs.
struct PredicateTranslator {
    /// The model the predicate is over (for messages).
    let modelName: String
    /// What each closure variable stands for: the predicate's input, a to-one target
    /// (`owner?.name`), an element of a to-many relationship (`crew.contains { … }`).
    var bindings: [PredicateExpressions.VariableID: PredicatePath] = [:]

    /// The predicate as Strata's tree.
    static func translate<T: PersistentModel>(_ predicate: Predicate<T>) throws(PredicateTranslationError) -> FetchPredicate {
        var translator = PredicateTranslator(modelName: T.schemaMetadata.entityName)
        translator.bindings[predicate.variable.key] = PredicatePath(segments: [], target: .model(T.schemaMetadata))
        do {
            return FetchPredicate(try translator.condition(predicate.expression))
        } catch let error as PredicateTranslationError {
            throw error
        } catch {
            throw PredicateTranslationError(.unsupportedOperator, "\(error)", model: translator.modelName)
        }
    }

    /// The sort as Strata's descriptor: a persisted attribute, a composite leaf or a to-one
    /// key path (`\.colorScheme?.primary`, `\.owner?.name`).
    static func translate<T: PersistentModel>(_ sort: SortDescriptor<T>) throws(PredicateTranslationError) -> FetchSortDescriptor {
        let metadata = T.schemaMetadata
        guard let keyPath = sort.keyPath else {
            throw PredicateTranslationError(.unsupportedKeyPath, "a SortDescriptor without a key path (a comparator) has no SQL translation; sort by a key path", model: metadata.entityName)
        }
        let path = try PredicatePath.resolve(keyPath, in: metadata)
        switch path.target {
        case .attribute: break
        default:
            throw PredicateTranslationError(.unsupportedKeyPath, "sorting by '\(path.keyPath)' is not possible: sort by an attribute, a composite leaf or an attribute of a to-one relationship", model: metadata.entityName)
        }
        return FetchSortDescriptor(path.keyPath, ascending: sort.order == .forward)
    }

    // MARK: - Walking the tree

    /// The meaning of `node`, through its ``StrataPredicateNode`` conformance.
    mutating func term(_ node: Any) throws -> PredicateTerm {
        guard let translatable = node as? any StrataPredicateNode else { throw unsupported(node) }
        return try translatable.strataTerm(&self)
    }

    /// `node` as a condition (a Boolean attribute key path means `== true`).
    mutating func condition(_ node: Any) throws -> StrataPredicateExpression {
        switch try term(node) {
        case .condition(let expression):
            return expression
        case .path(let path) where path.isBoolean:
            return .comparison(PredicateComparison(.keyPath(path.keyPath), .equalTo, .value(.bool(true))))
        case .constant(let value as Bool):
            return .constant(value)
        default:
            throw PredicateTranslationError(.unsupportedOperator, "\(Self.nodeName(node)) is not a condition Strata can evaluate in SQL", model: modelName, operator: Self.nodeName(node))
        }
    }

    /// The error for a node without a translation.
    func unsupported(_ node: Any, _ detail: String? = nil) -> PredicateTranslationError {
        let name = Self.nodeName(node)
        let what = Self.operatorNames[name].map { "\(name) (\($0))" } ?? name
        return PredicateTranslationError(.unsupportedOperator, "the operator \(what) has no SQL translation in Strata\(detail.map { ": \($0)" } ?? ""); rewrite the predicate with comparisons, &&, ||, !, ??, contains, starts(with:), contains(where:), isEmpty or count (docs/Predicates.md, \"#Predicate\")",
                                         model: modelName, operator: name)
    }

    /// `Arithmetic` for `PredicateExpressions.Arithmetic<…>`.
    static func nodeName(_ node: Any) -> String {
        let full = String(describing: type(of: node))
        return String(full.prefix { $0 != "<" })
    }

    /// What the nodes Strata refuses stand for in Swift.
    static let operatorNames: [String: String] = [
        "Arithmetic": "+, -, *", "Division": "/", "IntDivision": "/", "IntRemainder": "%", "FloatDivision": "/",
        "UnaryMinus": "unary -", "Conditional": "?: or if", "TypeCheck": "is", "ConditionalCast": "as?", "ForceCast": "as!",
        "SequenceMaximum": "max()", "SequenceMinimum": "min()", "Filter": "filter", "CollectionIndexSubscript": "subscript",
        "CollectionRangeSubscript": "subscript", "DictionaryKeySubscript": "subscript", "DictionaryKeyDefaultValueSubscript": "subscript",
        "OptionalFlatMap": "optional chaining", "Expression": "#Expression",
    ]

    // MARK: - Comparisons

    /// `lhs op rhs`.
    mutating func compare(_ lhs: Any, _ op: PredicateOperator, _ rhs: Any, node: Any) throws -> PredicateTerm {
        let left = try term(lhs)
        let right = try term(rhs)
        switch (left, right) {
        case (.constant(let a), .constant(let b)):
            guard let result = PredicateFolding.evaluate(try constant(a), op, try constant(b)) else { throw unsupported(node, "two constants that cannot be compared") }
            return .constant(result)
        case (.constant, _):
            guard let swapped = Self.swapped(op) else { throw unsupported(node) }
            return try compareTerms(right, swapped, left, node: node)
        default:
            return try compareTerms(left, op, right, node: node)
        }
    }

    /// A comparison whose left side is not a constant.
    mutating func compareTerms(_ left: PredicateTerm, _ op: PredicateOperator, _ right: PredicateTerm, node: Any) throws -> PredicateTerm {
        switch (left, right) {
        case (.path(let path), .constant(let value)):
            _ = try comparison(path, op, .value(.null))   // a composite or to-many is refused first
            return .condition(try comparison(path, op, try operand(value, for: path, node: node)))
        case (.coalesce(let path, let fallback), .constant(let value)):
            return .condition(try coalesced(path, fallback, op, try operand(value, for: path, node: node), node: node))
        case (.path(let a), .path(let b)):
            guard a.isAttribute, b.isAttribute else {
                throw PredicateTranslationError(.unsupportedKeyPath, "'\(a.keyPath)' and '\(b.keyPath)' can only be compared when both are attributes", model: modelName, operator: Self.nodeName(node))
            }
            return .condition(.comparison(PredicateComparison(.keyPath(a.keyPath), op, .keyPath(b.keyPath))))
        case (.condition(let a), .constant(let value as Bool)) where op == .equalTo || op == .notEqualTo:
            return .condition((value == (op == .equalTo)) ? a : .not(a))
        default:
            throw unsupported(node, "one side must be a persisted property and the other a value")
        }
    }

    /// `path op value` (a to-one relationship compares by primary key or with nil).
    func comparison(_ path: PredicatePath, _ op: PredicateOperator, _ value: PredicateOperand) throws -> StrataPredicateExpression {
        switch path.target {
        case .attribute, .count, .model:
            return .comparison(PredicateComparison(.keyPath(path.keyPath), op, value))
        case .composite(let composite):
            throw PredicateTranslationError(.unsupportedKeyPath, "'\(path.keyPath)' is a composite (\(composite.typeName)); compare its elements (\(composite.elements.map { path.keyPath + "." + $0.name }.joined(separator: ", ")))", model: modelName)
        case .toMany:
            throw PredicateTranslationError(.unsupportedKeyPath, "'\(path.keyPath)' is a to-many relationship; use isEmpty, count, contains(_:) or contains(where:)", model: modelName)
        }
    }

    /// `(path ?? fallback) op value`: the stored value when there is one, else the fallback
    /// compared in Swift — `(path != nil AND path op value) OR (path == nil AND <fallback op value>)`.
    func coalesced(_ path: PredicatePath, _ fallback: Any?, _ op: PredicateOperator, _ value: PredicateOperand, node: Any) throws -> StrataPredicateExpression {
        guard case .value(let v) = value, let folded = PredicateFolding.evaluate(try constant(fallback), op, v) else {
            throw unsupported(node, "?? needs a constant on both sides")
        }
        let present = StrataPredicateExpression.and([
            .comparison(PredicateComparison(.keyPath(path.keyPath), .notEqualTo, .value(.null))),
            try comparison(path, op, value),
        ])
        guard folded else { return present }
        return .or([present, .comparison(PredicateComparison(.keyPath(path.keyPath), .equalTo, .value(.null)))])
    }

    /// A string operator (`contains`, `starts(with:)`) of a string key path with a constant.
    mutating func stringOperator(_ base: Any, _ op: PredicateOperator, _ argument: Any, node: Any) throws -> PredicateTerm {
        let left = try term(base)
        let right = try term(argument)
        guard case .constant(let raw) = right else { throw unsupported(node, "the argument must be a value") }
        let text: Value
        if let character = raw as? Character { text = .string(String(character)) } else { text = try constant(raw) }
        guard case .string = text else { throw unsupported(node, "the argument must be a string") }
        switch left {
        case .path(let path) where path.isString:
            return .condition(try comparison(path, op, .value(text)))
        case .coalesce(let path, let fallback) where path.isString:
            return .condition(try coalesced(path, fallback, op, .value(text), node: node))
        case .constant(let value):
            guard let result = PredicateFolding.evaluate(try constant(value), op, text) else { throw unsupported(node) }
            return .constant(result)
        default:
            throw unsupported(node, "\(op.rawValue) applies to a String attribute")
        }
    }

    // MARK: - Constants

    /// A Swift constant as a stored value (nil as `.null`; a model as its primary key).
    func constant(_ value: Any?) throws -> Value {
        guard let value else { return .null }
        if let attribute = value as? any PersistentAttributeValue { return attribute.strataStored }
        if let model = value as? any PersistentModel {
            guard let id = model.persistentModelID, !id.isTemporary else {
                throw PredicateTranslationError(.unsupportedValue, "a \(type(of: model)) model compared in a predicate must be saved first (it has no primary key yet)", model: modelName)
            }
            return .int(id.primaryKey)
        }
        if let convertible = value as? any ValueConvertible { return convertible.strataValue }
        throw PredicateTranslationError(.unsupportedValue, "a constant of type \(type(of: value)) is not an attribute value (String, numbers, Bool, Date, Data, UUID, URL, Decimal, or a saved model)", model: modelName)
    }

    /// A constant compared with `path`: a value, or a list for IN.
    func operand(_ value: Any?, for path: PredicatePath, node: Any) throws -> PredicateOperand {
        .value(try constant(value))
    }

    /// A constant sequence as a list of values (an array literal, a captured array or set).
    func list(_ value: Any) throws -> [Value]? {
        if value is String { return nil }
        guard let sequence = value as? any Sequence else { return nil }
        return try Self.elements(of: sequence).map { try constant($0) }
    }

    private static func elements<S: Sequence>(of sequence: S) -> [Any] { sequence.map { $0 as Any } }

    static func swapped(_ op: PredicateOperator) -> PredicateOperator? {
        switch op {
        case .equalTo, .notEqualTo: return op
        case .lessThan: return .greaterThan
        case .lessThanOrEqualTo: return .greaterThanOrEqualTo
        case .greaterThan: return .lessThan
        case .greaterThanOrEqualTo: return .lessThanOrEqualTo
        default: return nil
        }
    }
}

/// The meaning of one node of a predicate tree.
enum PredicateTerm {
    /// A condition, translated.
    case condition(StrataPredicateExpression)
    /// A key path in the model.
    case path(PredicatePath)
    /// A Swift constant (nil: nil).
    case constant(Any?)
    /// `path ?? fallback`.
    case coalesce(PredicatePath, Any?)
    /// `lower...upper` or `lower..<upper` (constants).
    case range(lower: Any, upper: Any, closed: Bool)
}

/// Strata's predicate tree (Foundation declares a `PredicateExpression` protocol too).
typealias StrataPredicateExpression = Strata.PredicateExpression
