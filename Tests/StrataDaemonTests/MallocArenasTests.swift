import Foundation
import Testing
@testable import StrataDaemon

/// stratad bounds glibc's malloc arenas at start (peak RSS at 16M rows: 208 → 170 MB), unless
/// the operator set `MALLOC_ARENA_MAX`, glibc's own knob, which then stands.
@Suite struct MallocArenasTests {
    @Test func theDefaultLimitIsAppliedWithoutTheEnvironmentVariable() {
        #expect(MallocArenas.limit(environment: [:]) == MallocArenas.defaultLimit)
        #expect(MallocArenas.defaultLimit == 2)
    }

    @Test func theEnvironmentVariableStands() {
        #expect(MallocArenas.limit(environment: ["MALLOC_ARENA_MAX": "8"]) == nil)
    }

    /// The symbol the daemon calls is found in a glibc process: without it the default would
    /// silently not apply.
    @Test func mallocOptionsAreReachable() {
        #expect(dlsym(nil, "mallopt") != nil)
    }
}
