import Foundation
import Strata
import StrataVarlink

extension StoreInterface {
    /// The parameters of a `Fetch` or `Count`, turned into a `FetchRequest` on the store's
    /// threads (a predicate can take long to parse and compile).
    struct Query: Sendable {
        var entity: String
        var predicate: String?
        var arguments: [JSONValue]?
        var sort: [String]? = nil
        var limit: Int64? = nil
        var offset: Int64? = nil

        /// The lane the query runs on (docs/Security.md, "Lanes"): the key lane for a lookup by
        /// primary key — `SELF == %@` (or `self`, `=`, an integer literal), `SELF IN %@` with at
        /// most ``maxKeysInALookup`` keys — with no sort (the rows come by primary key); the query lane for anything
        /// else. Decided from the text alone, before anything is parsed or compiled: a lookup by
        /// key costs a few seeks whatever the store, so a query cannot take its threads.
        var lane: HostedStore.Lane {
            guard let predicate, predicate.utf8.count <= 64, (sort ?? []).isEmpty else { return .query }
            let words = predicate.split(whereSeparator: \.isWhitespace)
            guard words.count == 3, words[0] == "SELF" || words[0] == "self" else { return .query }
            switch (words[1], words[2]) {
            case ("==", "%@"), ("=", "%@"):
                return (arguments ?? []).count == 1 ? .key : .query
            case ("==", let literal), ("=", let literal):
                return Int64(literal) != nil ? .key : .query
            case ("IN", "%@"):
                guard let arguments, arguments.count == 1, case .array(let keys) = arguments[0], keys.count <= Self.maxKeysInALookup else { return .query }
                return .key
            default:
                return .query
            }
        }

        /// The most keys a lookup by key (`SELF IN %@`) takes on the key lane.
        static let maxKeysInALookup = 1_000

        /// The request; `counting` ignores sort, limit and offset.
        ///
        /// - Throws: `InvalidParameter` (an argument that is an object, arguments without a
        ///   predicate, a negative limit or offset), `LimitExceeded` (`limit` over
        ///   `maxObjects`), or the library's `FetchPredicateError`.
        func request(counting: Bool, maxObjects: Int) throws -> FetchRequest {
            var request = FetchRequest(entityName: entity)
            let arguments = try (self.arguments ?? []).enumerated().map { index, value in
                guard let argument = Self.predicateArgument(value) else { throw VarlinkError.invalidParameter("arguments[\(index)]") }
                return argument
            }
            if let predicate {
                request.predicate = try FetchPredicate(format: predicate, arguments: arguments)
            } else if !arguments.isEmpty {
                throw VarlinkError.invalidParameter("arguments")
            }
            guard !counting else { return request }
            for text in sort ?? [] {
                request.sortDescriptors.append(try FetchSortDescriptor(parsing: text))
            }
            if let limit {
                guard limit >= 0 else { throw VarlinkError.invalidParameter("limit") }
                guard limit <= maxObjects else {
                    throw VarlinkError.limitExceeded("max_fetch_objects", maximum: maxObjects, parameter: "limit", reason:
                        "a fetch returns at most \(maxObjects) objects (limits.max_fetch_objects), asked for \(limit); page with limit and offset")
                }
                request.fetchLimit = Int(limit)
            }
            if let offset {
                guard offset >= 0 else { throw VarlinkError.invalidParameter("offset") }
                request.fetchOffset = Int(offset)
            }
            return request
        }

        /// A JSON scalar or array as a predicate argument; nil for an object.
        static func predicateArgument(_ value: JSONValue) -> (any PredicateArgument)? {
            switch value {
            case .null: return Value.null
            case .bool(let b): return b
            case .int(let i): return i
            case .double(let d): return d
            case .string(let s): return s
            case .array(let elements):
                var list: [any PredicateArgument] = []
                for element in elements {
                    guard let argument = predicateArgument(element) else { return nil }
                    list.append(argument)
                }
                return PredicateList(list)
            case .object: return nil
            }
        }
    }
}
