import Foundation

extension VersionBridge {
    /// `transaction` in the served version's names: entities and properties renamed back,
    /// changes of entities the served version does not have left out, properties it does not
    /// have left out of an update's list. Nil when no change is left (a gap always passes).
    ///
    /// ```swift
    /// let page = try store.history(since: token)
    /// let old = page.transactions.compactMap(bridge.served)   // "registration", not "tailNumber"
    /// ```
    public func served(_ transaction: HistoryTransaction) -> HistoryTransaction? {
        guard transaction.kind == .objects else { return transaction }
        var result = transaction
        result.changes = transaction.changes.compactMap { change -> HistoryChange? in
            guard let entity = servedName(ofEntity: change.entity) else { return nil }
            var served = change
            served.entity = entity
            served.properties = change.properties.compactMap { servedName(ofProperty: $0, entity: change.entity) }.sorted()
            served.tombstone = change.tombstone.map { values in
                Dictionary(values.compactMap { key, value -> (String, Value)? in
                    let top = VersionBridgeBuilder.topLevel(key)
                    guard let name = servedName(ofProperty: top, entity: change.entity) else { return nil }
                    return (name + key.dropFirst(top.count), value)
                }, uniquingKeysWith: { a, _ in a })
            }
            return served
        }
        return result.changes.isEmpty ? nil : result
    }

    /// The store's entity names for `entities` in the served version's names (a history filter).
    public func currentNames(ofEntities entities: Set<String>) -> Set<String> {
        Set(entities.map(currentName(ofEntity:)))
    }
}
