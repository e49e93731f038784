import Synchronization

/// What an ``ObjectContext`` works out from its store's model and layout alone — entity
/// descriptions (with their insert, update and validation plans) and the row plans of the
/// fetches it ran — kept past the context's life for the next context on the same store.
///
/// A context takes one from its store's ``ContextCachePool`` when it is created and gives it
/// back when it ends, so a cache is used by one context (one thread) at a time and needs no
/// lock. A service that makes a fresh context per request (the daemon does, per call) then
/// finds its plans ready instead of working them out on every request.
final class ContextCaches: @unchecked Sendable {
    /// Entity descriptions by entity name.
    @exclusivity(unchecked) var entityInfos: [String: EntityInfo] = [:]
    /// Every relationship of an entity, inherited ones included, by entity name.
    @exclusivity(unchecked) var relationshipLists: [String: [Relationship]] = [:]
    /// How the result rows of each fetch's SQL become objects (``ObjectContext/rowPlanCapacity`` at most).
    @exclusivity(unchecked) var rowPlans: [String: ObjectContext.RowPlanEntry] = [:]

    init() {}
}

/// The idle ``ContextCaches`` of one store: a context takes one (or a new one) and gives it
/// back when it ends. At most ``capacity`` are kept; more contexts at once get fresh ones.
final class ContextCachePool: Sendable {
    /// Idle caches kept: more than the contexts a service runs at once on one store.
    static let capacity = 16

    private let idle = Mutex<[ContextCaches]>([])

    init() {}

    /// An idle cache, or a new one when none is idle.
    func take() -> ContextCaches {
        idle.withLock { $0.popLast() } ?? ContextCaches()
    }

    /// Gives `caches` back for the next context (dropped when ``capacity`` are idle).
    func giveBack(_ caches: ContextCaches) {
        idle.withLock { idle in
            if idle.count < Self.capacity { idle.append(caches) }
        }
    }

    /// How many caches are idle (for tests).
    var idleCount: Int { idle.withLock { $0.count } }
}
