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
