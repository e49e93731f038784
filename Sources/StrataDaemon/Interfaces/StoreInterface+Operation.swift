import Foundation
import Strata
import StrataVarlink

extension StoreInterface {
    /// One insert, update or delete (a method's, or one of a `Batch`), checked before the
    /// store is touched.
    struct ObjectOperation: Sendable {
        let kind: StrataStore.Operation.Kind
        let entity: String
        let id: Int64?
        let values: [String: JSONValue]?

        /// The range of object ids a client may name: saved objects have positive primary keys
        /// (negative ones are the library's temporary identifiers, never stored).
        static let objectIDRange: ClosedRange<Int64> = 1...Int64.max

        /// - Parameter index: the operation's place in a `Batch` (names the offending
        ///   parameter, `operations[2].values`); nil for Insert, Update and Delete.
        /// - Throws: `InvalidParameter` for a missing id (update, delete), an id on an insert,
        ///   or values that are missing or not an object (insert, update); `ObjectError`
        ///   (`invalidObjectID`) for an id no saved object can have.
        init(_ kind: StrataStore.Operation.Kind, entity: String, id: Int64?, values: JSONValue?, index: Int? = nil) throws {
            func parameter(_ name: String) -> String { index.map { "operations[\($0)].\(name)" } ?? name }
            switch kind {
            case .insert:
                guard id == nil else { throw VarlinkError.invalidParameter(parameter("id")) }
            case .update, .delete:
                guard let id else { throw VarlinkError.invalidParameter(parameter("id")) }
                guard Self.objectIDRange.contains(id) else {
                    throw StrataStore.Failure.objectError(.init(
                        code: "invalidObjectID", entity: entity, property: nil,
                        reason: "id \(id) is not an object id: ids of saved objects are 1 to \(Int64.max); use the _pk of a fetched object",
                        operation: index))
                }
            }
            var fields: [String: JSONValue]?
            if kind != .delete {
                guard case .object(let object)? = values else { throw VarlinkError.invalidParameter(parameter("values")) }
                fields = object
            }
            self.kind = kind
            self.entity = entity
            self.id = id
            self.values = fields
        }

        /// Applies the operation to `context` (not saved); the object inserted or updated.
        ///
        /// - Throws: `ObjectNotFound` when the object to update or delete does not exist,
        ///   `ObjectError` for what the library refuses (with `index` as its `operation`).
        func apply(in context: ObjectContext, index: Int?) throws -> ManagedObject? {
            do {
                switch kind {
                case .insert:
                    let object = try context.insert(entity)
                    try object.setValues(fromJSON: JSONValue.object(values ?? [:]).foundationObject as? [String: Any] ?? [:])
                    return object
                case .update, .delete:
                    let object: ManagedObject
                    do {
                        object = try context.object(with: ObjectID(entityName: entity, primaryKey: id!))
                    } catch let error as ObjectContextError where error.code == .objectNotFound {
                        throw StrataStore.Failure.objectNotFound(.init(entity: entity, id: id!, operation: index))
                    }
                    if kind == .delete {
                        try context.delete(object)
                        return nil
                    }
                    try object.setValues(fromJSON: JSONValue.object(values ?? [:]).foundationObject as? [String: Any] ?? [:])
                    return object
                }
            } catch let error as ObjectContextError {
                throw StoreInterface.objectError(error, index: index)
            }
        }
    }
}
