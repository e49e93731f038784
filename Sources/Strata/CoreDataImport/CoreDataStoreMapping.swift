import Foundation

/// Where one model version's data lives in a Core Data SQLite store, resolved against the
/// store's actual tables, or the differences between the two.
///
/// Core Data's layout (as Core Data writes it):
/// - One table `Z<ROOT>` per root entity (upper-cased name); sub-entities share it. System
///   columns `Z_PK` (primary key), `Z_ENT` (the row's entity number, from `Z_PRIMARYKEY`)
///   and `Z_OPT` (optimistic-locking version).
/// - An attribute is a column `Z` + its upper-cased name; a composite leaf `Z` + its path
///   joined with `_`. When two entities of one table declare the same name, the entity
///   numbered later gets a digit suffix (`ZTITLE`, `ZTITLE1`).
/// - A to-one relationship is a column `Z<NAME>` holding the related `Z_PK`, plus
///   `Z<n>_<NAME>` (the related object's entity number, `n` being the destination's) when
///   the destination has sub-entities.
/// - An ordered to-many whose inverse is to-one keeps its order in `Z_FOK_<INVERSE>` on the
///   destination's table.
/// - A many-to-many (or inverse-less to-many) relationship is a join table `Z_<n><NAME>`
///   named after one side (`n` its entity number), with a column `Z_<n><NAME>` per side —
///   the entity number of the objects it holds and the name of the relationship pointing to
///   them — and `Z_FOK_<n><NAME>` order keys (the ordered objects' column without `Z_`) for
///   ordered sides.
struct CoreDataStoreMapping {
    let model: ObjectModel
    /// Entity numbers from the store's `Z_PRIMARYKEY`.
    var entityNumbers: [String: Int] = [:]
    /// Entity names by number.
    var entityNames: [Int: String] = [:]
    /// One table per root entity, keyed by the root entity's name.
    var tables: [String: Table] = [:]
    var joins: [Join] = []
    /// Everything that keeps the store from having exactly this version's layout.
    var differences: [String] = []
    /// Entities the store's `Z_PRIMARYKEY` still lists under an earlier name (Core Data keeps
    /// the old `Z_NAME` after a rename by renaming identifier): current name → stale name.
    var staleNames: [String: String] = [:]

    struct Table {
        var root: String
        /// The table name as declared in the store.
        var name: String
        var columns: [Column]
        /// Columns sharing a base name (`ZTITLE`, `ZTITLE1`): which property owns which is
        /// checked against the data before import.
        var collisionGroups: [[Int]] = []
    }

    struct Column {
        var name: String
        var role: Role
    }

    enum Role {
        case primaryKey
        case entityNumber
        case optimisticLock
        case attribute(entity: String, keyPath: String, attribute: Attribute)
        case toOne(entity: String, relationship: String)
        case toOneEntityNumber(entity: String, relationship: String)
        /// `Z_FOK_<INVERSE>`: the order of this row in `owner.relationship` (ordered to-many),
        /// whose inverse is the to-one `inverse` of this table's entity.
        case order(owner: String, relationship: String, inverse: String)

        /// The entity declaring the property (nil for system and order columns).
        var entity: String? {
            switch self {
            case .attribute(let e, _, _), .toOne(let e, _), .toOneEntityNumber(let e, _): return e
            default: return nil
            }
        }
    }

    /// A join table of a many-to-many or inverse-less to-many relationship `owner.relationship`.
    struct Join {
        var owner: String
        var relationship: Relationship
        var table: String
        /// The column holding the owners' `Z_PK`s and the one holding the related objects'.
        var ownerColumn: String
        var destinationColumn: String
        /// Order keys: of the related objects in `owner.relationship`, and of the owners in the inverse.
        var destinationOrderColumn: String?
        var ownerOrderColumn: String?
    }

    /// Core Data's private entities (CloudKit mirroring) are not part of the model.
    static func isPrivateEntity(_ name: String) -> Bool { name.hasPrefix("NSCK") }

    /// Tables Core Data keeps for itself.
    static let systemTables: Set<String> = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]

    // MARK: - Resolving

    /// Resolves `model` against the store copied in `copy`. `earlierNames` lists, for an
    /// entity name, the names it had before renames by renaming identifier (across the
    /// bundle's versions): a store row of `Z_PRIMARYKEY` under such a name stands for the entity.
    init(model: ObjectModel, store copy: CoreDataStoreCopy, earlierNames: [String: [String]] = [:]) {
        self.model = model
        var storeEntities = copy.entities.filter { !Self.isPrivateEntity($0.name) }
        let modelNames = Set(model.entities.map(\.name))
        for entity in model.entities where !storeEntities.contains(where: { $0.name == entity.name }) {
            let candidates = ([entity.renamingIdentifier].compactMap { $0 } + (earlierNames[entity.name] ?? [])).filter { $0 != entity.name }
            guard let stale = candidates.first(where: { old in !modelNames.contains(old) && storeEntities.contains { $0.name == old } }),
                  let index = storeEntities.firstIndex(where: { $0.name == stale }) else { continue }
            storeEntities[index].name = entity.name
            staleNames[entity.name] = stale
        }
        for entity in storeEntities {
            entityNumbers[entity.name] = entity.number
            entityNames[entity.number] = entity.name
        }
        let storeNames = Set(storeEntities.map(\.name))
        for name in modelNames.subtracting(storeNames).sorted() {
            differences.append("entity '\(name)' is not in the store's Z_PRIMARYKEY")
        }
        for name in storeNames.subtracting(modelNames).sorted() {
            differences.append("the store has entity '\(name)', which this version does not have")
        }
        for entity in model.entities {
            guard let stored = storeEntities.first(where: { $0.name == entity.name }) else { continue }
            let expected = entity.parent.flatMap { entityNumbers[$0] } ?? 0
            let actualParent = stored.superNumber == 0 ? "none" : (entityNames[stored.superNumber] ?? "#\(stored.superNumber)")
            if expected != stored.superNumber && !(entity.parent == nil && stored.superNumber == 0) {
                differences.append("entity '\(entity.name)' has parent \(entity.parent.map { "'\($0)'" } ?? "none") here, \(actualParent == "none" ? "none" : "'\(actualParent)'") in the store")
            }
        }
        var claimed = Self.systemTables
        for root in model.rootEntities.sorted(by: { $0.name < $1.name }) {
            var name = "Z" + root.name.uppercased()
            if copy.columns(ofTable: name) == nil, let stale = staleNames[root.name], copy.columns(ofTable: "Z" + stale.uppercased()) != nil {
                name = "Z" + stale.uppercased()
            }
            guard let actual = copy.columns(ofTable: name) else {
                differences.append("the store has no table \(name) for entity '\(root.name)'")
                continue
            }
            claimed.insert(name)
            resolveTable(root: root, name: name, actualColumns: actual)
        }
        resolveJoins(copy: copy, claimed: &claimed)
        for table in copy.tables.keys.sorted() where table.hasPrefix("Z") && !claimed.contains(table) {
            differences.append("the store has table \(table), which this version does not explain")
        }
    }

    // MARK: - Entity tables

    /// The entities of `root`'s hierarchy in Core Data's numbering order (store numbers first,
    /// then names).
    private func orderedHierarchy(of root: String) -> [Entity] {
        model.hierarchy(of: root).sorted { (entityNumbers[$0.name] ?? Int.max, $0.name) < (entityNumbers[$1.name] ?? Int.max, $1.name) }
    }

    private mutating func resolveTable(root: Entity, name: String, actualColumns: [String]) {
        var columns: [Column] = [Column(name: "Z_PK", role: .primaryKey), Column(name: "Z_ENT", role: .entityNumber),
                                 Column(name: "Z_OPT", role: .optimisticLock)]
        var taken: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
        var bases: [String: [Int]] = [:]
        func allocate(_ base: String, _ role: Role) {
            var candidate = base
            var n = 0
            while taken.contains(candidate) { n += 1; candidate = base + String(n) }
            taken.insert(candidate)
            bases[base, default: []].append(columns.count)
            columns.append(Column(name: candidate, role: role))
        }
        for entity in orderedHierarchy(of: root.name) {
            for attribute in entity.attributes where !attribute.isTransient {
                allocate("Z" + attribute.name.uppercased(), .attribute(entity: entity.name, keyPath: attribute.name, attribute: attribute))
            }
            for composite in entity.composites {
                for leaf in composite.leaves {
                    let path = [composite.name] + leaf.path
                    allocate("Z" + path.joined(separator: "_").uppercased(),
                             .attribute(entity: entity.name, keyPath: path.joined(separator: "."), attribute: leaf.attribute))
                }
            }
            for relationship in entity.relationships where !relationship.isToMany {
                allocate("Z" + relationship.name.uppercased(), .toOne(entity: entity.name, relationship: relationship.name))
                if model.hierarchy(of: relationship.destination).count > 1 {
                    let number = entityNumbers[relationship.destination].map(String.init) ?? "?"
                    allocate("Z\(number)_" + relationship.name.uppercased(), .toOneEntityNumber(entity: entity.name, relationship: relationship.name))
                }
                if let inverse = model.inverse(of: relationship), inverse.isToMany, inverse.isOrdered {
                    allocate("Z_FOK_" + relationship.name.uppercased(), .order(owner: relationship.destination, relationship: inverse.name, inverse: relationship.name))
                }
            }
        }
        // Match against the store's columns (SQLite names are case-insensitive).
        let actual = Dictionary(actualColumns.map { ($0.uppercased(), $0) }, uniquingKeysWith: { a, _ in a })
        var used: Set<String> = []
        for i in columns.indices {
            if let declared = actual[columns[i].name] {
                columns[i].name = declared
                used.insert(declared.uppercased())
            } else if case .attribute = columns[i].role, let alternative = Self.compositeAlternative(columns[i].name, actual: actual) {
                columns[i].name = alternative
                used.insert(alternative.uppercased())
            } else {
                differences.append("table \(name) has no column \(columns[i].name) (\(Self.describe(columns[i].role)))")
            }
        }
        for column in actualColumns where !used.contains(column.uppercased()) {
            differences.append("table \(name) has column \(column), which this version does not explain")
        }
        let groups = bases.values.filter { $0.count > 1 }.sorted { $0[0] < $1[0] }
        tables[root.name] = Table(root: root.name, name: name, columns: columns, collisionGroups: groups)
    }

    /// A composite leaf column written without the `_` separators (`ZCOLORSCHEMEPRIMARY`).
    private static func compositeAlternative(_ name: String, actual: [String: String]) -> String? {
        guard name.contains("_"), !name.hasPrefix("Z_") else { return nil }
        return actual[name.replacingOccurrences(of: "_", with: "")]
    }

    static func describe(_ role: Role) -> String {
        switch role {
        case .primaryKey: return "primary key"
        case .entityNumber: return "entity number"
        case .optimisticLock: return "optimistic-locking version"
        case .attribute(let e, let k, _): return "attribute \(e).\(k)"
        case .toOne(let e, let r): return "to-one \(e).\(r)"
        case .toOneEntityNumber(let e, let r): return "entity number of to-one \(e).\(r)"
        case .order(let o, let r, _): return "order of \(o).\(r)"
        }
    }

    // MARK: - Join tables

    private mutating func resolveJoins(copy: CoreDataStoreCopy, claimed: inout Set<String>) {
        var done: Set<String> = []
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            for relationship in entity.relationships where relationship.isToMany {
                let inverse = model.inverse(of: relationship)
                if let inverse, !inverse.isToMany { continue }  // one-to-many: a foreign key
                let key = "\(entity.name).\(relationship.name)"
                guard !done.contains(key) else { continue }
                done.insert(key)
                if inverse != nil, let name = relationship.inverse { done.insert("\(relationship.destination).\(name)") }
                resolveJoin(owner: entity.name, relationship: relationship, inverse: inverse, copy: copy, claimed: &claimed)
            }
        }
    }

    private mutating func resolveJoin(owner: String, relationship: Relationship, inverse: Relationship?, copy: CoreDataStoreCopy,
                                      claimed: inout Set<String>) {
        let what = "many-to-many \(owner).\(relationship.name)"
        guard let ownerNumber = entityNumbers[owner], let destinationNumber = entityNumbers[relationship.destination] else {
            differences.append("\(what): its entities are not numbered in the store's Z_PRIMARYKEY")
            return
        }
        var candidates = ["Z_\(ownerNumber)\(relationship.name.uppercased())"]
        if let inverse { candidates.append("Z_\(destinationNumber)\(inverse.name.uppercased())") }
        guard let table = candidates.first(where: { copy.columns(ofTable: $0) != nil && !claimed.contains($0) }),
              let actual = copy.columns(ofTable: table)
        else {
            differences.append("the store has no join table \(candidates.joined(separator: " or ")) for \(what)")
            return
        }
        claimed.insert(table)
        func matches(_ column: String, _ base: String) -> Bool {
            let upper = column.uppercased()
            return upper == base || (upper.hasPrefix(base) && upper.dropFirst(base.count).allSatisfy(\.isNumber))
        }
        let plain = actual.filter { !$0.uppercased().hasPrefix("Z_FOK_") }
        let destinationBase = "Z_\(destinationNumber)\(relationship.name.uppercased())"
        let ownerBase = inverse.map { "Z_\(ownerNumber)\($0.name.uppercased())" }
        // The owner column first when both sides have one name (a self-inverse relationship).
        var destinationColumn = plain.last { matches($0, destinationBase) }
        var ownerColumn = ownerBase.flatMap { base in plain.first { matches($0, base) && $0 != destinationColumn } }
        if ownerColumn == nil { ownerColumn = plain.first { $0 != destinationColumn && $0.uppercased().hasPrefix("Z_\(ownerNumber)") } }
        if destinationColumn == ownerColumn { destinationColumn = nil }
        guard let ownerColumn, let destinationColumn else {
            differences.append("join table \(table) of \(what) has columns \(actual.joined(separator: ", ")), not \(destinationBase) and \(ownerBase ?? "Z_\(ownerNumber)…")")
            return
        }
        let fok = Dictionary(actual.filter { $0.uppercased().hasPrefix("Z_FOK_") }.map { ($0.uppercased(), $0) }, uniquingKeysWith: { a, _ in a })
        var join = Join(owner: owner, relationship: relationship, table: table, ownerColumn: ownerColumn, destinationColumn: destinationColumn)
        var used = [ownerColumn.uppercased(), destinationColumn.uppercased()]
        if relationship.isOrdered {
            let name = "Z_FOK_" + destinationColumn.uppercased().dropFirst(2)
            if let column = fok[name] { join.destinationOrderColumn = column; used.append(name) } else {
                differences.append("join table \(table) has no order column \(name) (\(owner).\(relationship.name) is ordered)")
            }
        }
        if let inverse, inverse.isOrdered {
            let name = "Z_FOK_" + ownerColumn.uppercased().dropFirst(2)
            if let column = fok[name] { join.ownerOrderColumn = column; used.append(name) } else {
                differences.append("join table \(table) has no order column \(name) (\(relationship.destination).\(inverse.name) is ordered)")
            }
        }
        for column in actual where !used.contains(column.uppercased()) {
            differences.append("join table \(table) has column \(column), which this version does not explain")
        }
        joins.append(join)
    }
}
