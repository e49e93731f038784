import Foundation

/// Values that stand for a request's arguments while its shape is compiled or parsed twice
/// (``FetchQueryCache``, ``PredicateParseCache``): argument `index` of round 0 or 1 becomes a
/// value no application would pass, of the argument's own type, from which the index is read
/// back. Each cache has its own family, so that the two never mistake each other's.
struct ArgumentSentinels: Sendable {
    /// Per round: strings are the prefix and the index.
    let stringPrefixes: [String]
    /// Per round: integers count up from the base (a million indexes at most).
    let intBases: [Int64]
    /// Per round: doubles count down from the base in steps of `doubleStep`, within `doubleSpan`.
    let doubleBases: [Double]
    let doubleStep: Double
    let doubleSpan: Double

    /// `operand` with each value this family can stand for replaced by its sentinel for
    /// `round` (lists item by item); the replaced values are appended to `values` in order.
    func abstract(_ operand: PredicateOperand, round: Int, _ values: inout [Value]) -> PredicateOperand {
        switch operand {
        case .keyPath: return operand
        case .value(let value):
            guard let sentinel = sentinel(for: value, index: values.count, round: round) else { return operand }
            values.append(value)
            return .value(sentinel)
        case .list(let items): return .list(items.map { abstract($0, round: round, &values) })
        }
    }

    /// The sentinel of argument `index` in `round`, of `value`'s type; nil for a type that has
    /// none (the request then cannot be cached by shape).
    func sentinel(for value: Value, index: Int, round: Int) -> Value? {
        switch value {
        case .string: .string(stringPrefixes[round] + String(index))
        case .int: .int(intBases[round] + Int64(index))
        case .double(let d) where d.isFinite: .double(doubleBases[round] - Double(index) * doubleStep)
        default: nil
        }
    }

    /// The argument index `value` stands for in `round`; nil when it is no sentinel of it.
    func index(of value: Value, round: Int) -> Int? {
        let index: Int?
        switch value {
        case .string(let s): return Self.decimalSuffix(of: s, after: stringPrefixes[round])
        case .int(let i) where i >= intBases[round] && i < intBases[round] + 1_000_000: index = Int(i - intBases[round])
        case .double(let d) where d <= doubleBases[round] && d > doubleBases[round] - doubleSpan:
            index = Int(((doubleBases[round] - d) / doubleStep).rounded())
        default: index = nil
        }
        guard let index, sentinel(for: value, index: index, round: round) == value else { return nil }
        return index
    }

    /// The index in `string` = `prefix` followed by the index in canonical decimal (what
    /// ``sentinel(for:index:round:)`` makes), read from the bytes without building the
    /// sentinel again to compare it; nil for anything else. Stricter than comparing Strings
    /// (bytes, not canonical equivalence): a text that only looks like a sentinel is taken as
    /// a value, and a fetch of that shape is then compiled in full, never wrongly.
    static func decimalSuffix(of string: String, after prefix: String) -> Int? {
        var bytes = string.utf8.makeIterator()
        for byte in prefix.utf8 {
            guard bytes.next() == byte else { return nil }
        }
        var index = 0
        var digits = 0
        while let byte = bytes.next() {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 18 else { return nil }
            if digits == 1 && index == 0 { return nil }   // a leading zero ("07")
            index = index * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return digits == 0 ? nil : index
    }
}
