import Foundation
import GRDB

extension ObjectContext {
    /// Fetches the saved objects matching `request`, registered in this context.
    ///
    /// Fetches read the store (`includesPendingChanges = false` in Core Data's terms): objects
    /// inserted but not saved are not returned, objects deleted but not saved are left out, and
    /// objects already registered are returned as they are in the context, with their
    /// unsaved changes.
    ///
    /// - Throws: ``FetchPredicateError`` for an unknown entity or keypath, a bad predicate, or
    ///   a request past the ``PredicateLimits`` or SQLite's own limits (code
    ///   ``FetchPredicateError/Code/limitExceeded``); ``ObjectContextError`` for store failures.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        let fragment = try queryCache.select(request, layout: storeLayout)
        guard let layout = storeLayout.entity(request.entityName) else { return [] }
        let objects = try fetchRows(fragment, table: layout.table)
        // Only objects deleted in this context (listed in `deleted`) can be marked deleted.
        return deleted.isEmpty ? objects : objects.filter { !$0.isDeleted }
    }

    /// Fetches objects of `entityName` with an NSPredicate-format filter.
    ///
    /// ```swift
    /// let red = try context.fetch("Aircraft", where: "colorScheme.primary == %@", "red",
    ///                             sortedBy: [FetchSortDescriptor("tailNumber")])
    /// ```
    public func fetch(
        _ entityName: String, where format: String? = nil, _ arguments: any PredicateArgument...,
        sortedBy sortDescriptors: [FetchSortDescriptor] = [], limit: Int? = nil, offset: Int = 0
    ) throws -> [ManagedObject] {
        let predicate = try format.map { try FetchPredicate(format: $0, arguments: arguments) }
        return try fetch(FetchRequest(entityName: entityName, predicate: predicate, sortDescriptors: sortDescriptors,
                                      fetchLimit: limit, fetchOffset: offset))
    }

    /// Counts the saved objects matching `request` without loading them.
    public func count(_ request: FetchRequest) throws -> Int {
        let fragment = try FetchQuery.count(request, layout: storeLayout)
        do {
            return try readDatabase { db in
                try Int.fetchOne(db, sql: fragment.sql, arguments: fragment.statementArguments) ?? 0
            }
        } catch let error as DatabaseError {
            if let limit = FetchPredicateError.sqliteLimit(error.message, entity: request.entityName) { throw limit }
            throw ObjectContextError(.store, "count failed", storeError: StoreError.from(error, path: storePath, while: "counting"))
        }
    }

    /// Counts objects of `entityName` matching an NSPredicate-format filter.
    public func count(_ entityName: String, where format: String? = nil, _ arguments: any PredicateArgument...) throws -> Int {
        let predicate = try format.map { try FetchPredicate(format: $0, arguments: arguments) }
        return try count(FetchRequest(entityName: entityName, predicate: predicate))
    }
}
