import Foundation
import Testing
@testable import StrataDaemon

/// `stores[].replication:` (docs/Fleet.md): its forms, its defaults, and a clear refusal of
/// every bad value naming the key, the line and what to write instead.
struct ReplicationConfigurationTests {
    static let model = Paths.aircraftModel

    func parse(_ replication: String) throws(ConfigurationError) -> StoreConfiguration {
        let text = "stores:\n  - name: a\n    path: /var/lib/strata/a.sqlite\n    model: \(Self.model)\n    replication: \(replication)\n"
        return try ConfigurationLoader().parse(text, file: "test.yaml").stores[0]
    }

    @Test func theFormsAndTheirDefaults() throws {
        #expect(try parse("true").replication == ReplicationConfiguration())
        #expect(try parse("{}").replication == ReplicationConfiguration())
        #expect(try parse("false").replication == nil)
        let full = try parse("{replica: file:///srv/replicas/a, max_lag: 4MiB}").replication
        #expect(full == ReplicationConfiguration(replica: "/srv/replicas/a", maxLag: 4 << 20))
        #expect(try parse("{replica: /srv/replicas/a}").replication?.maxLag == 64 << 20)
        #expect(try parse("{replica: /srv/replicas/a}").replication?.syncInterval == .seconds(1))
        #expect(try parse("{sync_interval: 250ms}").replication?.syncInterval == .milliseconds(250))
        let unreplicated = try ConfigurationLoader().parse("stores:\n  - {name: a, path: a.sqlite, model: \(Self.model)}\n", file: "t.yaml")
        #expect(unreplicated.stores[0].replication == nil)
    }

    @Test func thePositionDirectoryDefaultsToLitestreamsLocalCopy() {
        #expect(ReplicationConfiguration().positionDirectory(storePath: "/var/lib/strata/a.sqlite") == "/var/lib/strata/.a.sqlite-litestream")
        #expect(ReplicationConfiguration(replica: "/srv/r").positionDirectory(storePath: "/var/lib/strata/a.sqlite") == "/srv/r")
    }

    @Test(arguments: [
        ("maybe", ConfigurationError.Kind.wrongType, "stores[0].replication", "expected true or false"),
        ("{replica: relative/dir}", .invalidValue, "stores[0].replication.replica", "not an absolute directory or file:// URL"),
        ("{replica: s3://bucket/a}", .invalidValue, "stores[0].replication.replica", "not an absolute directory or file:// URL"),
        ("{max_lag: 1KiB}", .invalidValue, "stores[0].replication.max_lag", "between 64KiB and 16384MiB"),
        ("{max_lag: 17000MiB}", .invalidValue, "stores[0].replication.max_lag", "between 64KiB and 16384MiB"),
        ("{max_lag: lots}", .invalidValue, "stores[0].replication.max_lag", "not a size"),
        ("{max_lagg: 1MiB}", .unknownKey, "stores[0].replication.max_lagg", "did you mean 'max_lag'?"),
        ("[a]", .wrongType, "stores[0].replication", "expected a mapping"),
        ("{sync_interval: 5ms}", .invalidValue, "stores[0].replication.sync_interval", "between 10ms and 1h (e.g. 1s (Litestream's default)"),
        ("{sync_interval: soon}", .invalidValue, "stores[0].replication.sync_interval", "'soon' is not a duration"),
    ])
    func refused(replication: String, kind: ConfigurationError.Kind, key: String, words: String) {
        do {
            let store = try parse(replication)
            Issue.record("accepted \(replication): \(String(describing: store.replication))")
        } catch {
            #expect(error.kind == kind, "\(error)")
            #expect(error.key == key, "\(error)")
            #expect(error.line == 5, "\(error)")
            #expect(error.description.contains(words), "\(error)")
        }
    }
}
