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
/// | ``maxNestingDepth`` | 100 | open `(`, `NOT`/`!` and `{` around any point of a predicate |
/// | ``maxKeyPathComponents`` | 32 | dot-separated parts of one keypath (`owner.address.city` is 3) |
/// | ``maxJoinedTables`` | 63 | to-one tables joined in one query scope (SQLite's limit is 64 tables, the entity's own included) |
/// | ``maxSortDescriptors`` | 64 | sort keys of one fetch |
/// | ``maxBoundValues`` | 32,766 | values bound to one query (`?`), IN lists included (SQLite's default `SQLITE_MAX_VARIABLE_NUMBER`) |
public struct PredicateLimits: Sendable, Hashable {
    public let maxFormatLength: Int
    public let maxNestingDepth: Int
    public let maxKeyPathComponents: Int
    public let maxJoinedTables: Int
    public let maxSortDescriptors: Int
    public let maxBoundValues: Int

    /// The limits every fetch uses.
    public static let standard = PredicateLimits()

    package init(
        maxFormatLength: Int = 65_536, maxNestingDepth: Int = 100, maxKeyPathComponents: Int = 32,
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
