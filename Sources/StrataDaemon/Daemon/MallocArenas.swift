import Foundation

/// Bounds glibc's malloc arenas for the daemon's process. glibc gives each thread that
/// allocates under contention an arena of its own, up to eight per core, and memory freed in
/// one arena is not reused by the others: over a long finishing run at 16M rows (the writer,
/// the store threads, the deferred-work thread, the event loops and Swift's pool all
/// allocating), the daemon's peak RSS grew to 208–212 MB, against 170–173 MB with two arenas.
/// `MALLOC_ARENA_MAX` in the environment (the standard knob) wins over this default.
public enum MallocArenas {
    /// The default: two arenas, as many services on glibc set.
    public static let defaultLimit: Int32 = 2

    /// Applies `defaultLimit` unless `MALLOC_ARENA_MAX` is set; returns the limit applied, nil
    /// when the environment's stands or mallopt is not available (not glibc).
    @discardableResult
    public static func limit(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32? {
        guard environment["MALLOC_ARENA_MAX"] == nil else { return nil }
        // mallopt(M_ARENA_MAX = -8, n), found at run time: Swift's Glibc module does not
        // import malloc.h's mallopt.
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "mallopt") else { return nil }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        return mallopt(-8, defaultLimit) == 1 ? defaultLimit : nil
    }
}
