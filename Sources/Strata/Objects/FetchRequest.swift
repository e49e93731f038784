import Foundation

/// What to fetch: an entity, a filter, an order and a window (Core Data's `NSFetchRequest`).
///
/// ```swift
/// var request = FetchRequest(entityName: "Aircraft",
///                            predicate: try FetchPredicate(format: "owner.name == %@", "Air Lorraine"),
///                            sortDescriptors: [FetchSortDescriptor("tailNumber")],
///                            fetchLimit: 20)
/// request.includesSubentities = false
/// let query = try FetchQuery.select(request, layout: layout)
/// ```
public struct FetchRequest: Sendable, Hashable {
    /// The entity to fetch. Its sub-entities are fetched too unless ``includesSubentities`` is false.
    public var entityName: String
    /// The filter; nil matches every object.
    public var predicate: FetchPredicate?
    /// The order, most significant first. The primary key always breaks ties.
    public var sortDescriptors: [FetchSortDescriptor]
    /// At most this many objects; nil for no limit. Must not be negative.
    public var fetchLimit: Int?
    /// Skip this many objects first. Must not be negative.
    public var fetchOffset: Int
    /// Whether objects of sub-entities match (Core Data's default, true).
    public var includesSubentities: Bool

    /// A request for objects of `entityName` matching `predicate`, in `sortDescriptors` order, at most `fetchLimit` from `fetchOffset`.
    public init(
        entityName: String, predicate: FetchPredicate? = nil, sortDescriptors: [FetchSortDescriptor] = [], fetchLimit: Int? = nil,
        fetchOffset: Int = 0, includesSubentities: Bool = true
    ) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
        self.includesSubentities = includesSubentities
    }
}
