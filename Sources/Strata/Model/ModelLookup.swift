import Synchronization

/// The lookup tables of an ``ObjectModel``'s entities — position by name, sub-entities by
/// parent, the roots — computed once, on first use, and dropped whenever the model's
/// entities change.
///
/// Every model operation (validation, storage layout, migration inference, fetches) looks
/// entities up by name many times; with a linear scan per lookup, validating a model of a few
/// hundred entities took seconds. With this index each lookup is a dictionary access.
final class ModelLookup: Sendable {
    struct Index: Sendable {
        /// The position of the first entity of each name (a model with a duplicate name is
        /// invalid; lookups answer the first, as a linear scan did).
        var positionByName: [String: Int] = [:]
        /// Positions of each entity's direct sub-entities, in declaration order.
        var childrenByParent: [String: [Int]] = [:]
        /// Positions of the entities without a parent, in declaration order.
        var roots: [Int] = []

        init(_ entities: [Entity]) {
            positionByName.reserveCapacity(entities.count)
            for (position, entity) in entities.enumerated() {
                if positionByName[entity.name] == nil { positionByName[entity.name] = position }
                if let parent = entity.parent {
                    childrenByParent[parent, default: []].append(position)
                } else {
                    roots.append(position)
                }
            }
        }
    }

    private let cached = Mutex<Index?>(nil)

    /// The index of `entities`, built on the first call. The caller passes the entities the
    /// lookup belongs to (an ``ObjectModel`` replaces its lookup when they change).
    func index(of entities: [Entity]) -> Index {
        cached.withLock { cached in
            if let cached { return cached }
            let index = Index(entities)
            cached = index
            return index
        }
    }
}
