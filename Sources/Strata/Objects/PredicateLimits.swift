import Foundation

/// Bounds on what a fetch may ask for, so that no predicate, keypath or sort list — typed
/// by a user, sent by a client of the daemon, or passed to `stratactl` — can exhaust the
/// stack, stall the compiler or produce SQL that SQLite refuses with an obscure message.
///
/// Going past a limit throws a ``FetchPredicateError`` with code
/// ``FetchPredicateError/Code/limitExceeded`` whose message names the limit, its value and
/// what to do. The limits are documented in `docs/Predicates.md` ("Limits").
///
/// | limit | value | counts |
/// |---|---|---|
/// | ``maxFormatLength`` | 65,536 bytes | UTF-8 bytes of a predicate format |
/// | ``maxNestingDepth`` | 32 | open `(`, `NOT`/`!` and `{` around any point of a predicate |
/// | ``maxKeyPathComponents`` | 32 | dot-separated parts of one keypath (`owner.address.city` is 3) |
/// | ``maxJoinedTables`` | 63 | to-one tables joined in one query scope (SQLite's limit is 64 tables, the entity's own included) |
/// | ``maxSortDescriptors`` | 64 | sort keys of one fetch |
/// | ``maxBoundValues`` | 32,766 | values bound to one query (`?`), IN lists included (SQLite's default `SQLITE_MAX_VARIABLE_NUMBER`) |
///
/// SQLite has limits of its own that depend on the shape of the SQL — its parser's stack
/// holds 100 entries, about 16 levels of alternating `OR`/`AND` groups — and a fetch that
/// reaches one gets the same ``FetchPredicateError/Code/limitExceeded`` error, naming it,
/// instead of a store failure.
public struct PredicateLimits: Sendable, Hashable {
    /// The longest format, in characters.
    public let maxFormatLength: Int
    /// The deepest nesting of parentheses and subqueries.
    public let maxNestingDepth: Int
    /// The most components in one key path.
    public let maxKeyPathComponents: Int
    /// The most tables one fetch joins.
    public let maxJoinedTables: Int
    /// The most sort descriptors in one request.
    public let maxSortDescriptors: Int
    /// The most values bound to one statement.
    public let maxBoundValues: Int

    /// The limits every fetch uses.
    public static let standard = PredicateLimits()

    package init(
        maxFormatLength: Int = 65_536, maxNestingDepth: Int = 32, maxKeyPathComponents: Int = 32,
        maxJoinedTables: Int = 63, maxSortDescriptors: Int = 64, maxBoundValues: Int = 32_766
    ) {
        self.maxFormatLength = maxFormatLength
        self.maxNestingDepth = maxNestingDepth
        self.maxKeyPathComponents = maxKeyPathComponents
        self.maxJoinedTables = maxJoinedTables
        self.maxSortDescriptors = maxSortDescriptors
        self.maxBoundValues = maxBoundValues
    }
}

// MARK: - SQLite's own limits

extension FetchPredicateError {
    /// SQLite's messages for the limits of one statement that a fetch can reach, and what
    /// they mean in predicate terms.
    private static let sqliteLimitMessages: [(message: String, meaning: String)] = [
        ("parser stack overflow", "the predicate nests too deep for SQLite's parser (its stack holds 100 entries: about 16 levels of alternating OR and AND groups, fewer with to-many keypaths inside); flatten it"),
        ("Expression tree is too large", "the predicate's expression is deeper than SQLite allows (SQLITE_MAX_EXPR_DEPTH, 1000); flatten it"),
        ("too many SQL variables", "the fetch binds more values than SQLite allows in one statement; pass shorter IN lists or split the fetch"),
        ("at most 64 tables in a join", "the fetch joins more than 64 tables; use fewer distinct to-one keypaths"),
        ("too many terms in ORDER BY", "the fetch has more sort keys than SQLite allows; sort by fewer keys"),
    ]

    /// The error to report when SQLite refuses a fetch's statement for one of its own limits
    /// (which the ``PredicateLimits`` keep most fetches below, not all: SQLite's parser stack
    /// depends on the shape of the SQL); nil for any other SQLite error.
    static func sqliteLimit(_ message: String?, entity: String?) -> FetchPredicateError? {
        guard let message, let match = sqliteLimitMessages.first(where: { message.contains($0.message) }) else { return nil }
        return FetchPredicateError(.limitExceeded, "SQLite refused the fetch: \(match.message) — \(match.meaning)", entity: entity)
    }
}
