import Foundation

/// An object could not be inserted, changed, validated, saved or found.
///
/// The message names the entity, property and object, and what to do.
public struct ObjectContextError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable {
        case unknownEntity
        case unknownProperty
        case abstractEntity
        case typeMismatch
        case missingValue
        case countOutOfRange
        case uniquenessViolation
        case deleteDenied
        case conflict
        case objectNotFound
        case wrongContext
        case invalidRelationship
        case store
        case decoding
    }

    /// What went wrong.
    public var code: Code
    /// The entity concerned, if any.
    public var entity: String?
    /// The property concerned, if any.
    public var property: String?
    /// The object concerned, if any.
    public var objectID: ObjectID?
    /// Why, and what to do.
    public var reason: String
    /// The underlying store error for ``Code/store``.
    public var storeError: StoreError?

    /// An error with its context.
    public init(_ code: Code, _ reason: String, entity: String? = nil, property: String? = nil, objectID: ObjectID? = nil,
                storeError: StoreError? = nil) {
        self.code = code
        self.reason = reason
        self.entity = entity
        self.property = property
        self.objectID = objectID
        self.storeError = storeError
    }

    /// The reason, prefixed with the entity, property and object.
    public var description: String {
        if let storeError { return storeError.description }
        return ErrorContext.prefix(objectID.map { "object \($0)" } ?? .quoted("entity", entity), .quoted("property", property)) + reason
    }
}
