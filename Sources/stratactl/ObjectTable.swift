import Foundation
import Strata

/// Fetched objects as an aligned text table: `_pk`, then (for a hierarchy) `_entity`, the
/// entity's attributes, composite leaves and to-one relationships in model order.
struct ObjectTable {
    enum Column {
        case primaryKey
        case entityName
        case attribute(keyPath: String)
        case toOne(name: String)

        var header: String {
            switch self {
            case .primaryKey: return "_pk"
            case .entityName: return "_entity"
            case .attribute(let keyPath): return keyPath
            case .toOne(let name): return name
            }
        }
    }

    let columns: [Column]

    init(entity: String, model: ObjectModel, layout: StorageLayout) {
        var columns: [Column] = [.primaryKey]
        if layout.entity(entity)?.hasEntityColumn == true { columns.append(.entityName) }
        columns += model.storedAttributes(of: entity).map { .attribute(keyPath: $0.name) }
        for composite in model.allComposites(of: entity) {
            columns += composite.leaves.map { .attribute(keyPath: ([composite.name] + $0.path).joined(separator: ".")) }
        }
        columns += model.allRelationships(of: entity).filter { !$0.isToMany }.map { .toOne(name: $0.name) }
        self.columns = columns
    }

    func render(_ objects: [ManagedObject]) -> String {
        var table = TextTable(headers: columns.map(\.header))
        // Right-align a column when every non-NULL cell is a number and there is one.
        var numeric = Set(columns.indices), hasNumber: Set<Int> = []
        for object in objects {
            let json = object.jsonObject(style: .display)
            var row: [String] = []
            for (i, column) in columns.enumerated() {
                let (text, isNumber) = cell(column, object: object, json: json)
                if isNumber { hasNumber.insert(i) } else if text != "NULL" { numeric.remove(i) }
                row.append(text)
            }
            table.append(row)
        }
        table.rightAligned = numeric.intersection(hasNumber)
        let count = "(\(objects.count) object\(objects.count == 1 ? "" : "s"))"
        return table.render() + "\n" + count
    }

    private func cell(_ column: Column, object: ManagedObject, json: [String: Any]) -> (String, Bool) {
        switch column {
        case .primaryKey: return (String(object.objectID.primaryKey), true)
        case .entityName: return (object.entity.name, false)
        case .toOne(let name):
            if let pk = json[name] as? Int64 { return (String(pk), true) }
            if let pk = json[name] as? Int { return (String(pk), true) }
            return ("NULL", false)
        case .attribute(let keyPath):
            switch object[keyPath] {
            case .null: return ("NULL", false)
            case .string(let s): return (s, false)
            case .int(let i): return (String(i), true)
            case .double(let d): return (String(d), true)
            case .decimal(let d): return ("\(d)", true)
            case .data(let d): return ("<\(d.count) bytes>", false)
            case let value: return (value.description, false)
            }
        }
    }
}
