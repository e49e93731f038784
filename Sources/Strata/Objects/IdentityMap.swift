/// A context's identity map: at most one registered object per ``ObjectID``.
///
/// An open-addressing table keyed by the primary key (Fibonacci hashing, linear probing,
/// deletion by backward shift), with the entity compared on a key match. It replaces
/// `[ObjectID: ManagedObject]` on the fetch path, where every row is looked up and most are
/// inserted: the dictionary hashed each identifier with SipHash, probed through generic
/// value witnesses, and was emptied through the unspecialized `removeAll` on every
/// `reset()`. Here a lookup is a multiply, a shift and an integer compare, and the entity
/// name is compared only when the keys match.
///
/// Keys are stored beside the objects: an object keeps the slot of the identifier it was
/// registered under even if its ``ManagedObject/objectID`` changes later (the save removes an
/// inserted object before giving it its permanent key, and registers it again after).
struct IdentityMap {
    /// Primary keys, by slot (meaningful where `objects` holds an object).
    private var keys: ContiguousArray<Int64> = []
    /// Registered objects, by slot; nil: empty.
    private var objects: ContiguousArray<ManagedObject?> = []
    /// Registered objects.
    private(set) var count = 0
    /// `64 - log2(capacity)`: the home slot is the top bits of the key's product.
    private var shift = 64
    /// `capacity - 1`.
    private var mask = 0

    /// The smallest table (a table is at most 3/4 full before it grows).
    private static let minimumCapacity = 16

    var isEmpty: Bool { count == 0 }

    /// The objects, in no particular order.
    var values: [ManagedObject] { objects.compactMap { $0 } }

    @inline(__always)
    private func home(_ primaryKey: Int64) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: primaryKey) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
    }

    /// The slot holding the object registered under (`primaryKey`, `entityName`), or the
    /// complement (`~slot`, negative) of the empty slot where it would go. The table must not
    /// be empty of slots (``reserveOneMore()`` first when inserting).
    @inline(__always)
    private func probe(_ primaryKey: Int64, _ entityName: String) -> Int {
        var i = home(primaryKey)
        return objects.withUnsafeBufferPointer { objects in
            keys.withUnsafeBufferPointer { keys in
                while let object = objects[i] {
                    if keys[i] == primaryKey && object.objectID.entityName == entityName { return i }
                    i = (i + 1) & mask
                }
                return ~i
            }
        }
    }

    subscript(id: ObjectID) -> ManagedObject? {
        get {
            guard count > 0 else { return nil }
            let slot = probe(id.primaryKey, id.entityName)
            return slot >= 0 ? objects[slot] : nil
        }
        set {
            if let newValue {
                reserveOneMore()
                let slot = probe(id.primaryKey, id.entityName)
                if slot >= 0 {
                    objects[slot] = newValue
                } else {
                    keys[~slot] = id.primaryKey
                    objects[~slot] = newValue
                    count += 1
                }
            } else if count > 0 {
                let slot = probe(id.primaryKey, id.entityName)
                if slot >= 0 { remove(at: slot) }
            }
        }
    }

    /// The object registered under (`primaryKey`, `entityName`), or the one `make` creates,
    /// registered now: one probe either way (the fetch path).
    @inline(__always)
    mutating func object(primaryKey: Int64, entityName: String, orInsert make: () -> ManagedObject) -> ManagedObject {
        reserveOneMore()
        let slot = probe(primaryKey, entityName)
        if slot >= 0 { return objects[slot].unsafelyUnwrapped }
        let object = make()
        keys[~slot] = primaryKey
        objects[~slot] = object
        count += 1
        return object
    }

    /// Forgets every object. Keeps the table when it is not much larger than what it held
    /// (the next fetch of the same size fills it again); a table grown by an import shrinks.
    mutating func removeAll() {
        guard count > 0 else { return }
        let capacity = mask + 1
        if capacity > 8 * max(count, Self.minimumCapacity) {
            allocate(capacity: Self.capacity(for: count))
        } else {
            objects.withUnsafeMutableBufferPointer { objects in
                for i in objects.indices where objects[i] != nil { objects[i] = nil }
            }
        }
        count = 0
    }

    /// Grows the table if one more object would fill it past 3/4.
    @inline(__always)
    private mutating func reserveOneMore() {
        if (count + 1) * 4 > (mask + 1) * 3 { grow() }
    }

    private mutating func grow() {
        let old = objects
        let oldKeys = keys
        allocate(capacity: Self.capacity(for: count + 1))
        for i in old.indices {
            guard let object = old[i] else { continue }
            var j = home(oldKeys[i])
            while objects[j] != nil { j = (j + 1) & mask }
            keys[j] = oldKeys[i]
            objects[j] = object
        }
    }

    /// A power of two holding `count` objects at most 3/4 full.
    private static func capacity(for count: Int) -> Int {
        var capacity = minimumCapacity
        while count * 4 > capacity * 3 { capacity *= 2 }
        return capacity
    }

    private mutating func allocate(capacity: Int) {
        keys = ContiguousArray(repeating: 0, count: capacity)
        objects = ContiguousArray(repeating: nil, count: capacity)
        mask = capacity - 1
        shift = 64 - capacity.trailingZeroBitCount
    }

    /// Empties `slot`, moving later objects of its probe run back so that every object stays
    /// reachable from its home slot (deletion without tombstones).
    private mutating func remove(at slot: Int) {
        var hole = slot
        objects[hole] = nil
        count -= 1
        var j = hole
        while true {
            j = (j + 1) & mask
            guard let object = objects[j] else { return }
            let h = home(keys[j])
            // The object at j may fill the hole unless its home lies cyclically in (hole, j].
            let homeAfterHole = hole <= j ? (h > hole && h <= j) : (h > hole || h <= j)
            if homeAfterHole { continue }
            keys[hole] = keys[j]
            objects[hole] = object
            objects[j] = nil
            hole = j
        }
    }
}
