@_exported import Strata
@_exported import Observation

/// Makes a `final class` a persistent model (SwiftData's `@Model`).
///
/// Every stored `var` becomes a property of the entity named after the class: an attribute
/// (`String`, `Int`, `Int16/32/64`, `Double`, `Float`, `Decimal`, `Bool`, `Date`, `Data`,
/// `UUID`, `URL`, optionals of these, and `RawRepresentable` types declared
/// ``PersistentAttributeValue``), a composite attribute (an ``Composite()`` struct), a to-one
/// relationship (another model, optional) or a to-many relationship (an array of models).
/// `@Transient` properties stay plain Swift properties. The macro generates the entity
/// description (``PersistentModel/schemaMetadata``), accessors that read and write the
/// context's row storage, Observation tracking, and the key-path → name table `#Predicate`
/// translation uses.
///
/// ```swift
/// @Model final class Aircraft {
///     @Attribute(.unique) var tailNumber: String
///     var aircraftType: String?
///     var colorScheme: ColorScheme?
///     @Relationship(deleteRule: .cascade, inverse: \FlightData.aircraft) var flightParameters: [FlightData] = []
///     #Index<Aircraft>([\.colorScheme.primary], name: "byPrimaryColor")
///
///     init(tailNumber: String) { self.tailNumber = tailNumber }
/// }
/// ```
@attached(member, names: named(_$backing), named(_$observationRegistrar), named(init(backingData:)),
          named(persistentBackingData), named(schemaMetadata), arbitrary)
@attached(memberAttribute)
@attached(extension, conformances: PersistentModel, Observable)
public macro Model() = #externalMacro(module: "StrataMacros", type: "ModelMacro")

/// Makes a struct a composite attribute type (Core Data's composite attributes): each stored
/// property is an element (an attribute or a nested composite), stored in a column of its own
/// (`colorScheme_primary`), queryable and indexable by key path.
///
/// ```swift
/// @Composite struct ColorScheme: Codable {
///     var primary: String?
///     var secondary: String?
///     var tertiary: String?
/// }
/// ```
@attached(extension, conformances: CompositeAttributeValue, names: named(compositeMetadata), named(init(strataLeaves:)),
          named(strataWriteLeaves(to:)))
public macro Composite() = #externalMacro(module: "StrataMacros", type: "CompositeMacro")

/// Options of a persistent attribute (SwiftData's `@Attribute`): `.unique` (a uniqueness
/// constraint), `.preserveValueOnDeletion` (kept in the change history when the object is
/// deleted); `originalName` is the property's previous name (the renaming identifier that
/// lets a migration rename its column).
@attached(peer)
public macro Attribute(_ options: AttributeOption..., originalName: String? = nil) =
    #externalMacro(module: "StrataMacros", type: "MarkerMacro")

/// A relationship's options (SwiftData's `@Relationship`): the delete rule, the inverse (a key
/// path of the destination model), `.ordered` for an ordered to-many, count bounds and the
/// previous name.
@attached(peer)
public macro Relationship(_ options: RelationshipOption..., deleteRule: DeleteRule = .nullify,
                          minimumModelCount: Int? = 0, maximumModelCount: Int? = 0, originalName: String? = nil,
                          inverse: AnyKeyPath? = nil) = #externalMacro(module: "StrataMacros", type: "MarkerMacro")

/// A property that is not persisted: a plain Swift stored property of the class.
@attached(peer)
public macro Transient() = #externalMacro(module: "StrataMacros", type: "MarkerMacro")

/// A fetch index over key paths of the model (SwiftData's `#Index`); `name` is the index's
/// name in the model (part of the version checksum), derived from the key paths when omitted.
///
/// ```swift
/// #Index<Aircraft>([\.colorScheme.primary], name: "byPrimaryColor")
/// ```
@freestanding(declaration)
public macro Index<T>(_ keyPaths: [PartialKeyPath<T>], name: String? = nil) =
    #externalMacro(module: "StrataMacros", type: "IndexMacro")

/// A uniqueness constraint over key paths of the model (SwiftData's `#Unique`).
@freestanding(declaration)
public macro Unique<T>(_ keyPaths: [PartialKeyPath<T>]) = #externalMacro(module: "StrataMacros", type: "IndexMacro")

/// The accessor of a persisted property (added by `@Model`; not for direct use).
@attached(accessor, names: named(init), named(get), named(set))
public macro _PersistedProperty(_ ordinal: Int) = #externalMacro(module: "StrataMacros", type: "PersistedPropertyMacro")
