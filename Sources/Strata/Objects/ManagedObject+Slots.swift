import Foundation

/// Slot access for the typed layer (StrataData): a typed model resolves each of its
/// properties to a storage slot once per entity, then reads and writes the object's row
/// storage by slot, with the same change tracking as ``ManagedObject/setValue(_:forKeyPath:)``
/// and no keypath lookup, conversion to `[String: Any]` or JSON.
extension ManagedObject {
    /// The storage slot of an attribute or composite-leaf keypath (`tailNumber`,
    /// `colorScheme.primary`), or nil when the entity stores no such keypath.
    package func storageSlot(forKeyPath keyPath: String) -> Int? { info.slot(forKeyPath: keyPath) }

    /// The attribute type stored in `slot`.
    package func storageType(ofSlot slot: Int) -> AttributeType { info.slotTypes[slot] }

    /// The value in `slot` (see ``storageSlot(forKeyPath:)``).
    @inline(__always)
    package func storedValue(atSlot slot: Int) -> Value { values[slot] }

    /// Sets the value in `slot`, recording the change for the next save like
    /// ``setValue(_:forKeyPath:)``. The value is converted to the slot's type when it is not in
    /// its stored form already (a typed property always passes the stored form).
    ///
    /// - Throws: ``ObjectContextError`` when the object was deleted, or when the value does
    ///   not convert to the slot's type (naming the entity and keypath).
    package func setStoredValue(_ value: Value, atSlot slot: Int) throws(ObjectContextError) {
        try checkMutable()
        let type = info.slotTypes[slot]
        guard let coerced = value.coerced(to: type) else {
            throw ObjectContextError(.typeMismatch, "\(value) (\(value.kindName)) is not a valid \(type.rawValue)", entity: entity.name,
                                     property: layout.slots[slot].keyPath, objectID: objectID)
        }
        if values[slot] != coerced {
            if !isInserted, !changedSlots.contains(slot) { savedValues.append((slot, values[slot])) }
            values[slot] = coerced
            if !isInserted {
                changedSlots.insert(slot)
                context?.noteUpdated(self)
            }
        }
    }

    /// The primary key the object is saved under (temporary and negative until its insert is saved).
    package var primaryKey: Int64 { objectID.primaryKey }
}
