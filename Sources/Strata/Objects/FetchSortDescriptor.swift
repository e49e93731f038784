import Foundation

/// An ordering of fetched objects by a keypath: an attribute, a composite leaf
/// (`colorScheme.primary`), a to-one keypath (`owner.name`, joined) or a collection operator
/// (`tags.@count`).
///
/// ```swift
/// FetchSortDescriptor("owner.name")
/// FetchSortDescriptor("flightHours", ascending: false)
/// try FetchSortDescriptor(parsing: "tailNumber:desc:ci")
/// ```
///
/// Strings sort by code point (SQLite's BINARY collation); `caseInsensitive` sorts by the
/// case-folded value (the `strata_fold` SQL function, Unicode-aware, not only ASCII). nil
/// sorts first ascending and last descending. Fetches always end with a tiebreak on the
/// primary key, so that equal keys come out in a stable order and paging with
/// `fetchOffset` neither skips nor repeats objects.
public struct FetchSortDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The key path to sort by: `tailNumber`, `owner.name`.
    public var keyPath: String
    /// Whether smaller values come first.
    public var ascending: Bool
    /// Whether strings compare without regard to case.
    public var caseInsensitive: Bool

    /// Sorts by `keyPath`, ascending unless told otherwise.
    public init(_ keyPath: String, ascending: Bool = true, caseInsensitive: Bool = false) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.caseInsensitive = caseInsensitive
    }

    /// Parses `key`, `key:asc`, `key:desc`, and a trailing `:ci` for case-insensitive
    /// (`owner.name:desc:ci`). A leading `-` also means descending (`-flightHours`).
    ///
    /// - Throws: ``FetchPredicateError`` (code `.syntax`) pointing at the unknown part.
    public init(parsing text: String) throws(FetchPredicateError) {
        var parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        var key = parts.removeFirst().trimmingCharacters(in: .whitespaces)
        var ascending = true
        if key.hasPrefix("-") {
            ascending = false
            key.removeFirst()
        }
        guard !key.isEmpty else {
            throw FetchPredicateError(.syntax, "expected a keypath to sort by, as in name or name:desc", format: text, position: 0)
        }
        var offset = text.utf8.count - parts.map { $0.utf8.count + 1 }.reduce(0, +)
        var caseInsensitive = false
        for part in parts {
            switch part.trimmingCharacters(in: .whitespaces).lowercased() {
            case "asc", "ascending": ascending = true
            case "desc", "descending": ascending = false
            case "ci", "c", "caseinsensitive": caseInsensitive = true
            default:
                throw FetchPredicateError(.syntax, "unknown sort option '\(part)'; use asc, desc or ci (case-insensitive), as in name:desc:ci",
                                     format: text, position: offset + 1)
            }
            offset += part.utf8.count + 1
        }
        self.init(key, ascending: ascending, caseInsensitive: caseInsensitive)
    }

    /// Parses a comma-separated list: `"owner.name, flightHours:desc"`.
    public static func list(parsing text: String) throws(FetchPredicateError) -> [FetchSortDescriptor] {
        var result: [FetchSortDescriptor] = []
        for part in text.split(separator: ",") where !part.trimmingCharacters(in: .whitespaces).isEmpty {
            result.append(try FetchSortDescriptor(parsing: String(part)))
        }
        return result
    }

    /// `key`, `key:desc`, `key:ci`, `key:desc:ci` — parseable by ``init(parsing:)``.
    public var description: String {
        keyPath + (ascending ? "" : ":desc") + (caseInsensitive ? ":ci" : "")
    }

    /// The same ordering, reversed.
    public var reversed: FetchSortDescriptor {
        FetchSortDescriptor(keyPath, ascending: !ascending, caseInsensitive: caseInsensitive)
    }
}
