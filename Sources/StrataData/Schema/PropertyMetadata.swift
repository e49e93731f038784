import Foundation

/// One persisted property of a model class, as `@Model` declares it (generated code calls
/// the factory functions below; the overload picked by the property's type decides whether
/// it is an attribute, a composite or a relationship).
public struct PropertyMetadata: @unchecked Sendable {
    // @unchecked: key paths to stored properties (no captured values), immutable.

    /// The property's name (the Swift property's), also its name in the model.
    public let name: String
    /// Its key path on the model class.
    public let keyPath: AnyKeyPath
    let kind: Kind
    /// The previous name (`originalName:`), the model's renaming identifier.
    public let originalName: String?

    enum Kind {
        case attribute(AttributeType, optional: Bool, options: [AttributeOption])
        case composite(CompositeMetadata, optional: Bool, options: [AttributeOption])
        case relationship(RelationshipMetadata)
    }

    /// An attribute.
    public static func property<Root, V: PersistentAttributeValue>(
        _ name: String, _ keyPath: KeyPath<Root, V>, _ options: AttributeOption..., originalName: String? = nil
    ) -> PropertyMetadata {
        PropertyMetadata(name: name, keyPath: keyPath, kind: .attribute(V.strataAttributeType, optional: V.strataIsOptional, options: options),
                         originalName: originalName)
    }

    /// A composite attribute.
    public static func property<Root, V: CompositeAttributeValue>(
        _ name: String, _ keyPath: KeyPath<Root, V>, _ options: AttributeOption..., originalName: String? = nil
    ) -> PropertyMetadata {
        PropertyMetadata(name: name, keyPath: keyPath, kind: .composite(V.compositeMetadata, optional: V.strataIsOptional, options: options),
                         originalName: originalName)
    }

    /// A to-one relationship declared without `@Relationship` (nullify, no inverse).
    public static func property<Root, M: PersistentModel>(_ name: String, _ keyPath: KeyPath<Root, M?>) -> PropertyMetadata {
        relationship(name, keyPath)
    }

    /// A to-many relationship declared without `@Relationship` (nullify, no inverse, unordered).
    public static func property<Root, M: PersistentModel>(_ name: String, _ keyPath: KeyPath<Root, [M]>) -> PropertyMetadata {
        relationship(name, keyPath)
    }

    /// A to-one relationship.
    public static func relationship<Root, M: PersistentModel>(
        _ name: String, _ keyPath: KeyPath<Root, M?>, _ options: RelationshipOption..., deleteRule: DeleteRule = .nullify,
        minimumModelCount: Int? = 0, maximumModelCount: Int? = 0, originalName: String? = nil, inverse: AnyKeyPath? = nil
    ) -> PropertyMetadata {
        PropertyMetadata(name: name, keyPath: keyPath, kind: .relationship(RelationshipMetadata(
            destination: M.self, toMany: false, ordered: false, deleteRule: deleteRule, minimumCount: 0, maximumCount: 0,
            inverse: inverse, isOptional: true)), originalName: originalName)
    }

    /// A non-optional to-one relationship (saving without a target is refused).
    public static func relationship<Root, M: PersistentModel>(
        _ name: String, _ keyPath: KeyPath<Root, M>, _ options: RelationshipOption..., deleteRule: DeleteRule = .nullify,
        minimumModelCount: Int? = 0, maximumModelCount: Int? = 0, originalName: String? = nil, inverse: AnyKeyPath? = nil
    ) -> PropertyMetadata {
        PropertyMetadata(name: name, keyPath: keyPath, kind: .relationship(RelationshipMetadata(
            destination: M.self, toMany: false, ordered: false, deleteRule: deleteRule, minimumCount: 0, maximumCount: 0,
            inverse: inverse, isOptional: false)), originalName: originalName)
    }

    /// A to-many relationship (`.ordered` keeps its order).
    public static func relationship<Root, M: PersistentModel>(
        _ name: String, _ keyPath: KeyPath<Root, [M]>, _ options: RelationshipOption..., deleteRule: DeleteRule = .nullify,
        minimumModelCount: Int? = 0, maximumModelCount: Int? = 0, originalName: String? = nil, inverse: AnyKeyPath? = nil
    ) -> PropertyMetadata {
        PropertyMetadata(name: name, keyPath: keyPath, kind: .relationship(RelationshipMetadata(
            destination: M.self, toMany: true, ordered: options.contains(.ordered), deleteRule: deleteRule,
            minimumCount: minimumModelCount ?? 0, maximumCount: maximumModelCount ?? 0, inverse: inverse, isOptional: true)),
            originalName: originalName)
    }
}

/// A relationship's description before its inverse is resolved to a name.
struct RelationshipMetadata {
    let destination: any PersistentModel.Type
    let toMany: Bool
    let ordered: Bool
    let deleteRule: DeleteRule
    let minimumCount: Int
    let maximumCount: Int
    let inverse: AnyKeyPath?
    let isOptional: Bool
}

extension PropertyMetadata {
    /// An attribute option's or index's storage kind, for the checksum: whether the property
    /// is a relationship.
    var relationship: RelationshipMetadata? {
        if case .relationship(let r) = kind { return r }
        return nil
    }
}
