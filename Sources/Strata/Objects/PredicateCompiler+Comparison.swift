import Foundation

extension PredicateCompiler {
    // MARK: - Scalar comparisons

    func compileScalar(
        _ left: Term, _ op: PredicateOperator, _ options: PredicateOptions, _ right: Term, _ c: PredicateComparison
    ) throws(FetchPredicateError) -> SQLFragment {
        var l = left, r = right, op = op
        // Keep the keypath on the left when the operator allows it: `5 < age` is `age > 5`.
        if l.isConstant, !r.isConstant, let swapped = op.swapped {
            swap(&l, &r)
            op = swapped
        }
        let operatorSite = ErrorSite(c.source, offset: c.source.operatorOffset)
        let flags = options.intersection([.caseInsensitive, .diacriticInsensitive]).rawValue

        // Lists belong on the right of IN and BETWEEN, and nowhere else.
        if case .list = l.kind {
            throw fail(.syntax, "a list can only be on the right of IN or BETWEEN", site(of: l, c))
        }
        let rightIsList: Bool
        if case .list = r.kind { rightIsList = true } else { rightIsList = false }
        if (op == .in || op == .between) != rightIsList {
            if rightIsList {
                throw fail(.syntax, "a list can only follow IN or BETWEEN, not \(op.rawValue)", site(of: r, c))
            }
            throw fail(.syntax, "\(op.rawValue) needs a list on its right\(op == .in ? " (or a to-many keypath)" : ""); \(noun(r)) is not one", site(of: r, c), keyPath: r.keyPath)
        }

        // [c] and [d] apply to strings.
        if flags != 0 {
            for t in [l, r] where !t.isConstant && !isText(t) {
                throw fail(.invalidOperator, "\(options.formatSuffix) compares strings, but \(describe(t)); remove \(options.formatSuffix)", site(of: t, c), keyPath: t.keyPath)
            }
        }

        if op.isStringOperator { return try compileStringOperator(l, op, flags, r, c) }

        // Two keypaths: their types must be comparable. A keypath and a constant: convert the
        // constant to the keypath's stored form.
        if !l.isConstant, !r.isConstant {
            guard comparable(l, r) else {
                throw fail(.typeMismatch, "cannot compare \(noun(l)) with \(noun(r))", operatorSite, keyPath: l.keyPath)
            }
        } else if !l.isConstant {
            r = try coerce(r, to: l, c)
        } else if !r.isConstant {
            l = try coerce(l, to: r, c)
        }
        if flags != 0 {
            l = folded(l, flags)
            r = folded(r, flags)
        }

        // nil comparisons.
        let leftIsNull: Bool
        if case .constant(.null) = l.kind { leftIsNull = true } else { leftIsNull = false }
        if case .constant(.null) = r.kind {
            switch op {
            case .equalTo: return leftIsNull ? SQLFragment("1") : SQLFragment("\(l.sql.sql) IS NULL", l.sql.arguments)
            case .notEqualTo: return leftIsNull ? SQLFragment("0") : SQLFragment("\(l.sql.sql) IS NOT NULL", l.sql.arguments)
            default:
                throw fail(.invalidOperator, "\(op.rawValue) cannot compare with nil; only == nil and != nil can", operatorSite)
            }
        }
        if leftIsNull {
            throw fail(.invalidOperator, "\(op.rawValue) cannot compare with nil; only == nil and != nil can", operatorSite)
        }

        switch op {
        case .equalTo:
            return join(l, " = ", r)
        case .notEqualTo:
            // Null-safe: an object whose value is nil is "not equal" to a value, as in NSPredicate.
            return join(l, " IS NOT ", r)
        case .lessThan: return join(l, " < ", r)
        case .lessThanOrEqualTo: return join(l, " <= ", r)
        case .greaterThan: return join(l, " > ", r)
        case .greaterThanOrEqualTo: return join(l, " >= ", r)
        case .between:
            guard case .list(let bounds) = r.kind, bounds.count == 2, !bounds.contains(.null) else {
                throw fail(.syntax, "BETWEEN needs exactly two non-nil bounds: BETWEEN {low, high}", site(of: r, c))
            }
            return SQLFragment("\(l.sql.sql) BETWEEN ? AND ?", l.sql.arguments + bounds)
        case .in:
            guard case .list(let items) = r.kind else { return SQLFragment("0") }
            let values = items.filter { !$0.isNull }
            let hasNull = values.count < items.count
            if values.isEmpty {
                return hasNull ? SQLFragment("\(l.sql.sql) IS NULL", l.sql.arguments) : SQLFragment("0")
            }
            let placeholders = Array(repeating: "?", count: values.count).joined(separator: ", ")
            let test = "\(l.sql.sql) IN (\(placeholders))"
            if hasNull {
                return SQLFragment("(\(test) OR \(l.sql.sql) IS NULL)", l.sql.arguments + values + l.sql.arguments)
            }
            return SQLFragment(test, l.sql.arguments + values)
        default:
            preconditionFailure("string operators are compiled above")
        }
    }

    // MARK: - String operators

    private func compileStringOperator(
        _ l: Term, _ op: PredicateOperator, _ flags: Int, _ r: Term, _ c: PredicateComparison
    ) throws(FetchPredicateError) -> SQLFragment {
        for t in [l, r] {
            switch t.kind {
            case .constant(.string):
                continue
            case .constant(let v):
                throw fail(.typeMismatch, "\(op.rawValue) compares strings; it cannot take \(Self.article(v.kindName)) value", site(of: t, c))
            default:
                guard isText(t) else {
                    throw fail(.invalidOperator, "\(op.rawValue) compares strings, but \(describe(t))", site(of: t, c), keyPath: t.keyPath)
                }
            }
        }
        if op == .matches, case .constant(.string(let pattern)) = r.kind {
            do {
                _ = try SQLFunctions.regularExpression(pattern, flags: flags)
            } catch {
                throw fail(.invalidOperator, "the MATCHES pattern is refused \(error); check its brackets and escapes", site(of: r, c))
            }
        }
        switch op {
        case .beginsWith where flags == 0:
            if l.isColumn, case .constant(.string(let prefix)) = r.kind, let upper = Self.prefixUpperBound(prefix) {
                // A range on the column: the same rows as a prefix test, and index-friendly.
                return SQLFragment("(\(l.sql.sql) >= ? AND \(l.sql.sql) < ?)", [.string(prefix), .string(upper)])
            }
            return SQLFragment("instr(\(l.sql.sql), \(r.sql.sql)) = 1", l.sql.arguments + r.sql.arguments)
        case .contains where flags == 0:
            return SQLFragment("instr(\(l.sql.sql), \(r.sql.sql)) > 0", l.sql.arguments + r.sql.arguments)
        default:
            let function: String
            switch op {
            case .beginsWith: function = "strata_beginswith"
            case .endsWith: function = "strata_endswith"
            case .contains: function = "strata_contains"
            case .like: function = "strata_like"
            default: function = "strata_matches"
            }
            return SQLFragment("\(function)(\(l.sql.sql), \(r.sql.sql), \(flags))", l.sql.arguments + r.sql.arguments)
        }
    }

    /// The smallest string greater than every string that starts with `prefix` (in UTF-8 /
    /// code point order, SQLite's BINARY collation): `prefix` with its last scalar incremented.
    static func prefixUpperBound(_ prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        guard let last = scalars.popLast() else { return nil }
        var next = last.value + 1
        if next == 0xD800 { next = 0xE000 }
        guard let scalar = Unicode.Scalar(next) else { return nil }
        scalars.append(scalar)
        var result = ""
        result.unicodeScalars.append(contentsOf: scalars)
        return result
    }

    // MARK: - Types

    private func isText(_ t: Term) -> Bool {
        if case .object = t.kind { return false }
        return t.type == .string || t.type == .uri
    }

    private func comparable(_ a: Term, _ b: Term) -> Bool {
        guard let x = a.type, let y = b.type else { return true }
        let text: Set<AttributeType> = [.string, .uri, .uuid]
        return x == y || (x.isNumeric && y.isNumeric) || (text.contains(x) && text.contains(y))
    }

    /// Converts a constant (or each element of a list) to the stored form of `target`'s type.
    private func coerce(_ t: Term, to target: Term, _ c: PredicateComparison) throws(FetchPredicateError) -> Term {
        switch t.kind {
        case .constant(let v):
            let value = try coerce(v, to: target, at: site(of: t, c))
            return Term(sql: SQLFragment("?", [value]), kind: .constant(value), offset: t.offset)
        case .list(let values):
            var converted: [Value] = []
            for v in values { converted.append(try coerce(v, to: target, at: site(of: t, c))) }
            return Term(sql: SQLFragment(""), kind: .list(converted), offset: t.offset)
        default:
            return t
        }
    }

    private func coerce(_ v: Value, to target: Term, at site: ErrorSite) throws(FetchPredicateError) -> Value {
        if v.isNull { return .null }
        if case .object(let destination) = target.kind {
            guard case .int = v else {
                let name = target.keyPath.map { $0.isEmpty || $0 == "self" ? "the object itself" : "'\($0)', a to-one relationship to '\(destination)'," } ?? "an object"
                throw fail(.typeMismatch, "\(name) can only be compared with nil or an object's primary key (an integer), not \(Self.article(v.kindName)) value", site, keyPath: target.keyPath)
            }
            return v
        }
        guard let type = target.type else { return v }
        if let converted = v.coerced(to: type) { return converted }
        // A number outside an integer type's precision or range still compares numerically.
        if type.isNumeric, v.doubleValue != nil { return v }
        throw fail(.typeMismatch, "\(describe(target)); it cannot be compared with \(Self.article(v.kindName)) value. Pass \(Self.article(Self.swiftTypeName(type))) (or nil)", site, keyPath: target.keyPath)
    }

    /// `a String`, `an Integer`.
    static func article(_ word: String) -> String {
        (word.first.map { "AEIOaeio".contains($0) } ?? false ? "an " : "a ") + word
    }

    private static func swiftTypeName(_ type: AttributeType) -> String {
        switch type {
        case .string: return "String"
        case .int16, .int32, .int64: return "integer"
        case .double, .float: return "number"
        case .decimal: return "Decimal or number"
        case .bool: return "Bool"
        case .date: return "Date"
        case .data: return "Data"
        case .uuid: return "UUID"
        case .uri: return "URL"
        }
    }

    // MARK: - Helpers

    private func folded(_ t: Term, _ flags: Int) -> Term {
        var t = t
        switch t.kind {
        case .constant(.string(let s)):
            let f = Value.string(SQLFunctions.fold(s, flags: flags))
            t.kind = .constant(f)
            t.sql = SQLFragment("?", [f])
        case .list(let values):
            t.kind = .list(values.map { if case .string(let s) = $0 { return .string(SQLFunctions.fold(s, flags: flags)) } else { return $0 } })
        case .constant:
            break
        default:
            t.sql = SQLFragment("strata_fold(\(t.sql.sql), \(flags))", t.sql.arguments)
            t.isColumn = false
        }
        return t
    }

    private func join(_ l: Term, _ op: String, _ r: Term) -> SQLFragment {
        SQLFragment(l.sql.sql + op + r.sql.sql, l.sql.arguments + r.sql.arguments)
    }

    /// `'age' is an int64 attribute of 'Person'`, `the String value`, …
    func describe(_ t: Term) -> String {
        switch t.kind {
        case .constant(let v): return "the \(v.kindName) value"
        case .list: return "the list"
        case .object(let destination):
            guard let k = t.keyPath, !k.isEmpty, k != "self" else { return "the object itself (a \(destination))" }
            return "'\(k)' is a to-one relationship to '\(destination)'"
        case .expression:
            return "'\(t.keyPath ?? "?")' is \(kind(of: t))"
        }
    }

    /// `'age' (an int64 attribute of 'Person')`.
    private func noun(_ t: Term) -> String {
        switch t.kind {
        case .expression: return "'\(t.keyPath ?? "?")' (\(kind(of: t)))"
        case .object(let destination): return "'\(t.keyPath ?? "self")' (an object of '\(destination)')"
        default: return describe(t)
        }
    }

    private func kind(of t: Term) -> String {
        let type = t.type?.rawValue ?? "untyped"
        if t.keyPath?.contains("@") == true { return "\(Self.article(type)) collection value" }
        return "\(Self.article(type)) attribute" + (t.entity.map { " of '\($0)'" } ?? "")
    }

    private func site(of t: Term, _ c: PredicateComparison) -> ErrorSite {
        ErrorSite(c.source, offset: t.offset)
    }
}
