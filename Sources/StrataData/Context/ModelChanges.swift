import Foundation

/// One change to a model of type `T`, read from the store's change history.
public struct ModelChange<T: PersistentModel>: Sendable, Hashable {
    /// Inserted, updated or deleted.
    public var kind: HistoryChange.Kind
    /// The model's identity (fetch it with ``ModelContext/model(for:as:)``; a deleted one is gone).
    public var id: ObjectID
    /// The properties an update changed (names of `T`'s properties).
    public var properties: [String]
    /// The transaction's token: resume a stream after it with ``ModelContext/changes(to:since:)``.
    public var token: Int64
    /// The transaction's author (``ModelContext/author``), if any.
    public var author: String?
}

/// The changes to models of type `T`, as their transactions commit (any context, any
/// process writing the store with history, batch updates and deletes included); built on the
/// store's change history (``PersistentStore/changes(since:entities:)``): bounded memory, and
/// resumable from a token. Ends when the task is cancelled or the store closes.
///
/// ```swift
/// for try await change in context.changes(to: Aircraft.self) {
///     print(change.kind, change.id, change.properties)
/// }
/// ```
public struct ModelChanges<T: PersistentModel>: AsyncSequence, Sendable {
    /// One change.
    public typealias Element = ModelChange<T>
    let transactions: HistoryObservation

    /// An iterator over the changes.
    public func makeAsyncIterator() -> Iterator { Iterator(transactions: transactions.makeAsyncIterator()) }

    /// Reads transactions and hands out their changes to `T`'s entity one by one.
    public struct Iterator: AsyncIteratorProtocol {
        var transactions: HistoryObservation.Iterator
        var buffer: [ModelChange<T>] = []

        /// The next change, waiting for the next commit when none is left.
        public mutating func next() async throws -> ModelChange<T>? {
            while buffer.isEmpty {
                guard let transaction = try await transactions.next() else { return nil }
                let entity = T.schemaMetadata.entityName
                buffer = transaction.changes.filter { $0.entity == entity }.map {
                    ModelChange(kind: $0.kind, id: $0.objectID, properties: $0.properties, token: transaction.token, author: transaction.author)
                }
                buffer.reverse()
            }
            return buffer.popLast()
        }
    }
}

extension ModelContext {
    /// The changes to `T` models committed after `token` (nil: from now on).
    public func changes<T: PersistentModel>(to type: T.Type, since token: Int64? = nil) -> ModelChanges<T> {
        ModelChanges(transactions: objectContext.store.changes(since: token, entities: [T.schemaMetadata.entityName]))
    }
}
