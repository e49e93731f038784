import Foundation
import GRDB

extension ObjectContext {
    /// The name of the process's user (`getpwuid`), or its uid when it has no name.
    static let processUser: String = {
        let uid = getuid()
        if let entry = getpwuid(uid), let name = entry.pointee.pw_name { return String(cString: name) }
        return String(uid)
    }()

    /// Hands the save's changes to the change history, inside the save's transaction (the
    /// one place `save()` touches history). Contexts of a migration stage record nothing: a
    /// migration is not an object change.
    func recordHistory(deleted: [ManagedObject], inserted: [ManagedObject], updated: [ManagedObject], in db: Database) throws {
        guard let store = backingStore, store.options.recordsHistory else { return }
        var changes: [PendingHistoryChange] = []
        changes.reserveCapacity(deleted.count + inserted.count + updated.count)
        for object in deleted {
            var change = PendingHistoryChange(entity: object.entity.name, primaryKey: object.objectID.primaryKey, kind: .delete)
            for (slot, column) in object.layout.slots.enumerated() where column.attribute.preservesValueInHistoryOnDeletion {
                change.tombstone[column.keyPath] = object.committedValue(slot)
            }
            changes.append(change)
        }
        for object in inserted {
            changes.append(PendingHistoryChange(entity: object.entity.name, primaryKey: object.pendingKey ?? object.objectID.primaryKey, kind: .insert))
        }
        // Objects changed alike (a batch update) share one property list: computed once per
        // run of equal change sets, not per object.
        var last: (info: ObjectIdentifier, slots: ChangedSlots, keys: Set<String>, joins: Set<String>, properties: [String])?
        for object in updated {
            let properties: [String]
            if let last, last.info == ObjectIdentifier(object.info), last.slots == object.changedSlots,
               last.keys == object.changedKeys, last.joins == object.changedJoinRelationships {
                properties = last.properties
            } else {
                var names = Set(object.changedSlots.map { slot in
                    let keyPath = object.layout.slots[slot].keyPath
                    return keyPath.firstIndex(of: ".").map { String(keyPath[..<$0]) } ?? keyPath
                })
                for key in object.changedKeys where object.layout.relationships[key] != nil { names.insert(key) }
                names.formUnion(object.changedJoinRelationships)
                properties = names.sorted()
                last = (ObjectIdentifier(object.info), object.changedSlots, object.changedKeys, object.changedJoinRelationships, properties)
            }
            changes.append(PendingHistoryChange(entity: object.entity.name, primaryKey: object.objectID.primaryKey, kind: .update, properties: properties))
        }
        if let bridge {
            // An older version's changes are history under the store's current names.
            changes = changes.map { change in
                var renamed = change
                renamed.entity = bridge.currentName(ofEntity: change.entity)
                renamed.properties = change.properties.map { bridge.currentName(ofProperty: $0, entity: change.entity) }.sorted()
                renamed.tombstone = Dictionary(change.tombstone.map { key, value in
                    let top = VersionBridgeBuilder.topLevel(key)
                    return (bridge.currentName(ofProperty: top, entity: change.entity) + key.dropFirst(top.count), value)
                }, uniquingKeysWith: { a, _ in a })
                return renamed
            }
        }
        try HistoryRecorder.record(changes, user: transactionUser, author: transactionAuthor, store: store, in: db)
    }
}
