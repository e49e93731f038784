import GRDB

extension StatementArguments {
    /// Positional arguments from values already converted, for the object layer's fetches
    /// (``SQLFragment/statementArguments``; its per-row writes bind through ``DirectBinding``).
    ///
    /// GRDB's `StatementArguments(_:)` initializers are generic and not inlinable: called from
    /// another module they run unspecialized, converting each value through a key path or a
    /// sequence witness (a `perf` profile of `strata-bench crud` put that at about a quarter
    /// of an insert's time). Its array-literal initializer is specialized inside GRDB, so up to
    /// 12 values go through an array literal; more through the generic path.
    @inline(__always)
    static func values(_ v: [DatabaseValue]) -> StatementArguments {
        switch v.count {
        case 0: return []
        case 1: return [v[0]]
        case 2: return [v[0], v[1]]
        case 3: return [v[0], v[1], v[2]]
        case 4: return [v[0], v[1], v[2], v[3]]
        case 5: return [v[0], v[1], v[2], v[3], v[4]]
        case 6: return [v[0], v[1], v[2], v[3], v[4], v[5]]
        case 7: return [v[0], v[1], v[2], v[3], v[4], v[5], v[6]]
        case 8: return [v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]]
        case 9: return [v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]]
        case 10: return [v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]]
        case 11: return [v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]]
        case 12: return [v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11]]
        default: return StatementArguments(v)
        }
    }
}
