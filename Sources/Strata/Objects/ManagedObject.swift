import Foundation

/// A generic object of one entity, registered in an ``ObjectContext`` (Core Data's
/// `NSManagedObject` used through key-value coding).
///
/// Attributes and composite leaves are read and written by keypath; a composite is read and
/// written as a whole as a dictionary of its leaves:
///
/// ```swift
/// let aircraft = try context.insert("Aircraft")
/// aircraft["tailNumber"] = "F-GSPT"
/// aircraft["colorScheme.primary"] = "red"
/// aircraft[composite: "colorScheme"]        // ["primary": "red", "secondary": nil, …]
/// ```
///
/// Using a keypath the entity does not have, or a value of the wrong type, through the
/// subscripts is a programming error (a precondition); ``setValue(_:forKeyPath:)`` throws
/// instead, for values that come from users, files or sockets.
public final class ManagedObject {
    /// The object's identity; temporary (negative primary key) until its insert is saved.
    @exclusivity(unchecked) public internal(set) var objectID: ObjectID
    /// The entity and its storage, shared by every object of the entity in the context.
    let info: EntityInfo
    /// The object's entity (a sub-entity when fetched through its parent).
    public var entity: Entity { info.entity }
    var layout: EntityLayout { info.layout }
    /// The context the object belongs to; nil once the object was deleted and saved or the context reset.
    public internal(set) var context: ObjectContext? {
        get {
            guard let context = owner?.context, context.generation == ownerGeneration else { return nil }
            return context
        }
        set {
            owner = newValue?.link
            ownerGeneration = newValue?.generation ?? 0
        }
    }
    /// The context's link, and its generation when the object joined it:
    /// ``ObjectContext/reset()`` starts a new generation, which lets go of every object at once.
    @exclusivity(unchecked) private var owner: ObjectContext.Link?
    @exclusivity(unchecked) private var ownerGeneration = 0

    /// Attribute values (composite leaves flattened), in the entity layout's slot order.
    @exclusivity(unchecked) var values: [Value]
    /// The values of the slots changed since the last save as they were before their first
    /// change (each slot once): with ``values``, what was last read from or written to the
    /// store (``committedValue(_:)``). Kept per changed slot rather than as a second copy of
    /// every value, so that changing a fetched object does not copy its whole value array.
    @exclusivity(unchecked) var savedValues: [(slot: Int, value: Value)] = []
    /// Slots changed since the last save (saved objects only).
    @exclusivity(unchecked) var changedSlots = ChangedSlots()
    /// The optimistic-locking version read with the row.
    @exclusivity(unchecked) var version: Int64
    /// The primary key given to an inserted object by the save in progress.
    @exclusivity(unchecked) var pendingKey: Int64?
    /// Relationship and transient state, allocated on first use: most objects (every object of
    /// an entity without relationships) never need it, and fetching, registering and freeing
    /// them then touches one reference instead of seven collections.
    @exclusivity(unchecked) var relations: ObjectRelations?

    /// The object's ``relations``, allocated now if needed.
    @inline(__always) private func ensuredRelations() -> ObjectRelations {
        if let relations { return relations }
        let created = ObjectRelations()
        relations = created
        return created
    }

    /// To-one relationships: the target, resolved or as a stored primary key.
    var toOne: [String: ToOneTarget] {
        get { relations?.toOne ?? [:] }
        _modify { yield &ensuredRelations().toOne }
    }
    /// To-one keys as last read from or written to the store (restored by rollback).
    var committedToOne: [String: Int64?] {
        get { relations?.committedToOne ?? [:] }
        _modify { yield &ensuredRelations().committedToOne }
    }
    /// To-many relationships that were loaded or set, in order.
    var toMany: [String: [ManagedObject]] {
        get { relations?.toMany ?? [:] }
        _modify { yield &ensuredRelations().toMany }
    }
    /// Positions in ordered one-to-many relationships, keyed by the order column on this row.
    var orderValues: [String: Int64] {
        get { relations?.orderValues ?? [:] }
        _modify { yield &ensuredRelations().orderValues }
    }
    /// Relationship keys changed since the last save (to-one names, order columns).
    var changedKeys: Set<String> {
        get { relations?.changedKeys ?? [] }
        _modify { yield &ensuredRelations().changedKeys }
    }
    /// Join-table relationships whose membership changed.
    var changedJoinRelationships: Set<String> {
        get { relations?.changedJoinRelationships ?? [] }
        _modify { yield &ensuredRelations().changedJoinRelationships }
    }
    /// Values of transient attributes set on this object: kept in memory, never saved.
    var transientValues: [String: Value] {
        get { relations?.transientValues ?? [:] }
        _modify { yield &ensuredRelations().transientValues }
    }

    /// Whether the object was inserted in its context and not yet saved.
    @exclusivity(unchecked) public internal(set) var isInserted = false
    /// Whether the object was deleted in its context (the delete is written on save).
    @exclusivity(unchecked) public internal(set) var isDeleted = false

    enum ToOneTarget {
        case stored(Int64?)
        case object(ManagedObject?)
    }

    init(objectID: ObjectID, info: EntityInfo, context: ObjectContext, values: [Value], version: Int64) {
        self.objectID = objectID
        self.info = info
        self.owner = context.link
        self.ownerGeneration = context.generation
        self.values = values
        self.version = version
    }

    /// The value of `slot` as last read from or written to the store.
    func committedValue(_ slot: Int) -> Value {
        for saved in savedValues where saved.slot == slot { return saved.value }
        return values[slot]
    }

    /// Puts back the values of the changed slots as last read from or written to the store.
    func restoreSavedValues() {
        for saved in savedValues { values[saved.slot] = saved.value }
        savedValues = []
    }

    /// Whether the object has unsaved changes.
    public var hasChanges: Bool {
        isInserted || isDeleted || !changedSlots.isEmpty || !changedKeys.isEmpty || !changedJoinRelationships.isEmpty
    }

    /// The value of an attribute or composite leaf, or nil when the entity has no such keypath.
    /// A transient attribute answers the value set on this object (or its default): it lives
    /// in memory only and is never saved.
    public func value(forKeyPath keyPath: String) -> Value? {
        if let slot = info.slot(forKeyPath: keyPath) { return values[slot] }
        guard !info.transientAttributes.isEmpty, let transient = info.transientAttributes[keyPath] else { return nil }
        return transientValues[keyPath] ?? transient.defaultValue.flatMap { $0.coerced(to: transient.type) } ?? .null
    }

    // MARK: - Attributes

    /// The value of an attribute or composite leaf. Unknown keypaths are a programming error.
    public subscript(keyPath: String) -> Value {
        get {
            guard let value = value(forKeyPath: keyPath) else { preconditionFailure("entity '\(entity.name)' has no attribute '\(keyPath)'") }
            return value
        }
        set {
            do { try setValue(newValue, forKeyPath: keyPath) } catch { preconditionFailure("\(error)") }
        }
    }

    /// Sets an attribute or composite leaf, converting the value to the attribute's type.
    ///
    /// - Throws: ``ObjectContextError`` (`unknownProperty`, `typeMismatch`) naming the entity and keypath.
    public func setValue(_ value: any ValueConvertible, forKeyPath keyPath: String) throws(ObjectContextError) {
        if !info.transientAttributes.isEmpty, let transient = info.transientAttributes[keyPath] {
            let raw = value.strataValue
            guard let coerced = raw.coerced(to: transient.type) else {
                throw ObjectContextError(.typeMismatch, "\(raw) (\(raw.kindName)) is not a valid \(transient.type.rawValue)", entity: entity.name, property: keyPath, objectID: objectID)
            }
            try checkMutable()
            transientValues[keyPath] = coerced
            return
        }
        guard let slot = info.slot(forKeyPath: keyPath) else {
            if let composite = entityComposite(keyPath) {
                throw ObjectContextError(.typeMismatch, "'\(keyPath)' is a composite attribute; set its leaves (\(composite.leaves.map { keyPath + "." + $0.path.joined(separator: ".") }.joined(separator: ", "))) or use setComposite", entity: entity.name, property: keyPath, objectID: objectID)
            }
            throw ObjectContextError(.unknownProperty, "entity '\(entity.name)' has no attribute '\(keyPath)'\(Self.suggestion(keyPath, in: Array(layout.attributeColumns.keys)))", entity: entity.name, property: keyPath, objectID: objectID)
        }
        let raw = value.strataValue
        let type = info.slotTypes[slot]
        guard let coerced = raw.coerced(to: type) else {
            throw ObjectContextError(.typeMismatch, "\(raw) (\(raw.kindName)) is not a valid \(type.rawValue)", entity: entity.name, property: keyPath, objectID: objectID)
        }
        try checkMutable()
        if values[slot] != coerced {
            if !isInserted, !changedSlots.contains(slot) { savedValues.append((slot, values[slot])) }
            values[slot] = coerced
            if !isInserted {
                changedSlots.insert(slot)
                context?.noteUpdated(self)
            }
        }
    }

    /// A composite attribute as a dictionary of its leaves, keyed by their path inside the
    /// composite (`primary`, or `inner.x` for nested composites).
    public subscript(composite name: String) -> [String: Value] {
        get {
            guard let composite = entityComposite(name) else { preconditionFailure("entity '\(entity.name)' has no composite attribute '\(name)'") }
            var result: [String: Value] = [:]
            for leaf in composite.leaves {
                let relative = leaf.path.joined(separator: ".")
                result[relative] = value(forKeyPath: "\(name).\(relative)") ?? .null
            }
            return result
        }
        set {
            do { try setComposite(newValue, forKey: name) } catch { preconditionFailure("\(error)") }
        }
    }

    /// Sets a whole composite from a dictionary of leaf values; leaves not given become nil.
    public func setComposite(_ dictionary: [String: Value], forKey name: String) throws(ObjectContextError) {
        guard let composite = entityComposite(name) else {
            throw ObjectContextError(.unknownProperty, "entity '\(entity.name)' has no composite attribute '\(name)'", entity: entity.name, property: name, objectID: objectID)
        }
        let leafPaths = Set(composite.leaves.map { $0.path.joined(separator: ".") })
        if let unknown = dictionary.keys.sorted().first(where: { !leafPaths.contains($0) }) {
            throw ObjectContextError(.unknownProperty, "composite '\(name)' has no element '\(unknown)' (elements: \(leafPaths.sorted().joined(separator: ", ")))", entity: entity.name, property: "\(name).\(unknown)", objectID: objectID)
        }
        for path in leafPaths.sorted() { try setValue(dictionary[path] ?? .null, forKeyPath: "\(name).\(path)") }
    }

    func entityComposite(_ name: String) -> CompositeAttribute? {
        context?.model.allComposites(of: entity.name).first { $0.name == name }
            ?? entity.composites.first { $0.name == name }
    }

    func checkMutable() throws(ObjectContextError) {
        if isDeleted {
            throw ObjectContextError(.objectNotFound, "the object was deleted; it cannot be changed", entity: entity.name, objectID: objectID)
        }
    }

    static func suggestion(_ name: String, in candidates: [String]) -> String {
        let lowered = name.lowercased()
        let close = candidates.filter { $0.lowercased() == lowered || $0.lowercased().hasPrefix(lowered) || lowered.hasPrefix($0.lowercased()) }.sorted()
        if let first = close.first { return "; did you mean '\(first)'?" }
        return candidates.isEmpty ? "" : " (it has: \(candidates.sorted().prefix(12).joined(separator: ", ")))"
    }
}

extension ManagedObject: CustomStringConvertible {
    /// `<ObjectID inserted key=value, …>` (the first six values).
    public var description: String {
        let shown = layout.slots.indices.prefix(6).map { "\(layout.slots[$0].keyPath)=\(values[$0])" }.joined(separator: ", ")
        return "<\(objectID)\(isDeleted ? " deleted" : "")\(isInserted ? " inserted" : "") \(shown)>"
    }
}

/// The immutable description of one entity shared by all its objects in a context: the entity,
/// its storage layout and the lookups the hot paths need, held once instead of copied into
/// every object.
final class EntityInfo {
    let entity: Entity
    let layout: EntityLayout
    let slotIndex: [String: Int]
    /// `slotIndex` as a list, for entities of up to ``linearLookupLimit`` slots.
    private let slotList: [(keyPath: String, slot: Int)]
    let slotTypes: [AttributeType]
    /// Default values in slot order: a new object's starting values.
    let defaults: [Value]
    /// Transient attributes of the entity and its ancestors, by name (no slot, no column).
    let transientAttributes: [String: Attribute]
    /// The members of the entity's JSON object: attributes, and composites as nested objects
    /// of their leaves (worked out once per entity from the slots' keypaths).
    private(set) lazy var jsonMembers: [JSONMember] = JSONMember.tree(layout.slots.map { $0.keyPath.split(separator: ".").map(String.init) })
    /// Plans computed on first use by the context that owns this description.
    var insertPlan: InsertPlan?
    var validationPlan: ObjectContext.ValidationPlan?
    /// The relationships of the entity and its ancestors, once a context looked them up.
    var allRelationships: [Relationship]?
    var updateSQL: [UpdateShape: String] = [:]

    /// Up to this many slots, a keypath is found by comparing it with each slot's: a keypath is
    /// short, and comparing short strings is cheaper than hashing one (every `setValue` and
    /// `value(forKeyPath:)` looks one up; hashing was a fifth of an insert's time).
    static let linearLookupLimit = 16

    /// The slot of an attribute or composite-leaf keypath, or nil.
    @inline(__always)
    func slot(forKeyPath keyPath: String) -> Int? {
        guard slotList.isEmpty else {
            for entry in slotList where entry.keyPath == keyPath { return entry.slot }
            return nil
        }
        return slotIndex[keyPath]
    }

    init(entity: Entity, layout: EntityLayout, transientAttributes: [Attribute] = []) {
        self.entity = entity
        self.transientAttributes = Dictionary(transientAttributes.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        self.layout = layout
        self.slotIndex = layout.slotIndex
        self.slotList = layout.slotIndex.count <= Self.linearLookupLimit ? layout.slotIndex.map { ($0.key, $0.value) } : []
        self.slotTypes = layout.slotTypes
        self.defaults = layout.slots.map { column in column.attribute.defaultValue.flatMap { $0.coerced(to: column.attribute.type) } ?? .null }
    }
}
