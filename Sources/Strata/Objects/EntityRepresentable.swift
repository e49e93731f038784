import Foundation

/// A `Codable` Swift type stored as objects of one entity.
///
/// Properties map to attributes by name; a nested `Codable` struct maps to a composite
/// attribute; relationships are not part of the value (use ``ManagedObject`` for them).
///
/// ```swift
/// struct Aircraft: EntityRepresentable {
///     static let entityName = "Aircraft"
///     struct ColorScheme: Codable { var primary: String?; var secondary: String?; var tertiary: String? }
///     var tailNumber: String
///     var colorScheme: ColorScheme?
/// }
/// try context.insert(Aircraft(tailNumber: "F-GSPT", colorScheme: .init(primary: "red")))
/// let fleet: [Aircraft] = try context.fetch(Aircraft.self, where: "colorScheme.primary == %@", "red")
/// ```
public protocol EntityRepresentable: Codable {
    static var entityName: String { get }
}

extension ObjectContext {
    /// Inserts an object of `T.entityName` with the value's properties.
    ///
    /// - Throws: ``ObjectContextError`` naming the property that does not fit the entity.
    @discardableResult
    public func insert<T: EntityRepresentable>(_ value: T) throws -> ManagedObject {
        let object = try insert(T.entityName)
        try object.setValues(fromJSON: try Self.jsonDictionary(encoding: value))
        return object
    }

    /// Fetches objects as values of `T`.
    public func fetch<T: EntityRepresentable>(
        _ type: T.Type, where format: String? = nil, _ arguments: any PredicateArgument...,
        sortedBy sortDescriptors: [FetchSortDescriptor] = [], limit: Int? = nil
    ) throws -> [T] {
        let predicate = try format.map { try FetchPredicate(format: $0, arguments: arguments) }
        let objects = try fetch(FetchRequest(entityName: T.entityName, predicate: predicate, sortDescriptors: sortDescriptors, fetchLimit: limit))
        return try objects.map { try $0.decode(T.self) }
    }

    static func jsonDictionary<T: Encodable>(encoding value: T) throws -> [String: Any] {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.dataEncodingStrategy = .base64
        let data = try encoder.encode(value)
        guard let dictionary = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ObjectContextError(.decoding, "\(T.self) does not encode to a keyed container; entity values must be structs or classes with properties")
        }
        return dictionary
    }
}

extension ManagedObject {
    /// Decodes the object's attributes and composites as a value of `T`.
    ///
    /// - Throws: ``ObjectContextError/Code/decoding`` naming the property that does not fit.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let data = try JSONSerialization.data(withJSONObject: Self.stripNulls(jsonObject(style: .codable)))
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        decoder.dataDecodingStrategy = .base64
        do {
            return try decoder.decode(T.self, from: data)
        } catch let DecodingError.keyNotFound(key, context) {
            throw ObjectContextError(.decoding, "cannot decode \(T.self): no value for '\((context.codingPath + [key]).map(\.stringValue).joined(separator: "."))' (nil in the store, non-optional in the type)", entity: entity.name, property: key.stringValue, objectID: objectID)
        } catch let DecodingError.typeMismatch(_, context) {
            throw ObjectContextError(.decoding, "cannot decode \(T.self): '\(context.codingPath.map(\.stringValue).joined(separator: "."))' has another type in the entity", entity: entity.name, property: context.codingPath.first?.stringValue, objectID: objectID)
        } catch {
            throw ObjectContextError(.decoding, "cannot decode \(T.self): \(error)", entity: entity.name, objectID: objectID)
        }
    }

    private static func stripNulls(_ dictionary: [String: Any]) -> [String: Any] {
        var result: [String: Any] = [:]
        for (key, value) in dictionary {
            if value is NSNull { continue }
            if let nested = value as? [String: Any] {
                let inner = stripNulls(nested)
                if !inner.isEmpty { result[key] = inner }
            } else {
                result[key] = value
            }
        }
        return result
    }
}
