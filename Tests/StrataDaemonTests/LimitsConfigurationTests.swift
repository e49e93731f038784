import Foundation
import Testing
@testable import StrataDaemon

/// The `limits:` section: every bound has a default, a range, and a refusal naming the key.
struct LimitsConfigurationTests {
    func parse(_ limits: String) throws(ConfigurationError) -> Limits {
        try ConfigurationLoader().parse("stores: []\nlimits:\n" + limits, file: "test.yaml").limits
    }

    @Test func defaults() throws {
        let limits = try parse("  max_connections: 256\n")
        #expect(limits == Limits())
        #expect(limits.messageTimeout == .seconds(10))
        #expect(limits.maxFetchObjects == 10_000)
        #expect(limits.maxBatchOperations == 10_000)
        #expect(Limits.maxJSONDepth == 64)
    }

    @Test func everyKeyIsRead() throws {
        let limits = try parse("""
              message_timeout: 2s
              max_connections: 8
              max_fetch_objects: 50
              max_batch_operations: 5

            """)
        #expect(limits.messageTimeout == .seconds(2))
        #expect(limits.maxConnections == 8)
        #expect(limits.maxFetchObjects == 50)
        #expect(limits.maxBatchOperations == 5)
    }

    @Test(arguments: [
        ("  message_timeout: 0s\n", "limits.message_timeout", "longer than 0s"),
        ("  message_timeout: soon\n", "limits.message_timeout", "not a duration"),
        ("  max_connections: 0\n", "limits.max_connections", "between 1 and 65536"),
        ("  max_connections: 100000\n", "limits.max_connections", "between 1 and 65536"),
        ("  max_fetch_objects: -1\n", "limits.max_fetch_objects", "between 1 and 10000000"),
        ("  max_batch_operations: lots\n", "limits.max_batch_operations", "between 1 and 1000000"),
        ("  max_conections: 3\n", "limits.max_conections", "did you mean 'max_connections'?"),
    ])
    func refused(text: String, key: String, reason: String) {
        expectRefused(text, key: key, reason: reason, parse)
    }
}
