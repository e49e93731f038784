import Foundation
import GRDB
import Testing
@testable import Strata

/// Hops that discard stored data say so where they run: the report, the history, standard
/// error and the JSON `warnings` of `import-coredata` and `migrate`; `--no-discard` refuses
/// them (exit 3, nothing written); `import-coredata --dry-run` shows them and creates nothing.
@Suite("Lossy migration hops are reported (Core Data import and migrate)")
struct CoreDataDiscardTests {
    static let warning = "hop 'Cars 2' -> 'Cars 3' discarded 3 non-null values of attribute LuxuryCar.price"

    /// The renamed-entity Cars store, with a `Cars 3` that drops `LuxuryCar.price`.
    static func cars() throws -> (CoreDataFixture, URL) {
        let fixture = CoreDataFixture()
        let bundle = try CoreDataRenameFixture.writeBundle(in: fixture, versions: [1, 2])
        let dropped = CoreDataRenameFixture.contents(version: 2)
            .replacingOccurrences(of: #"userDefinedModelVersionIdentifier="2""#, with: #"userDefinedModelVersionIdentifier="3""#)
            .split(separator: "\n").filter { !$0.contains(#"name="price""#) }.joined(separator: "\n")
        let directory = bundle.appending(path: "Cars 3.xcdatamodel")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(dropped.utf8).write(to: directory.appending(path: "contents"))
        try CoreDataRenameFixture.writeStore(at: fixture.store)
        try FileManager.default.createDirectory(at: fixture.out.deletingLastPathComponent(), withIntermediateDirectories: true)
        return (fixture, bundle)
    }

    @Test("the import's migration counts what the hop discards: report, warnings, history")
    func reported() throws {
        let (fixture, bundle) = try Self.cars()
        let report = try CoreDataStoreImporter(bundle: bundle, options: .init(toVersion: "Cars 3")).importStore(at: fixture.store, to: fixture.out)
        #expect(report.finalVersion == "Cars 3")
        let hop = try #require(report.migration?.hops.first)
        #expect(hop.discarded.map(\.count) == [3])
        #expect(hop.discarded.first?.data.column == "price")
        #expect(report.warnings == [Self.warning])
        let history = try PersistentStore.metadata(at: fixture.out).history
        #expect(history.last?.detail.hasSuffix("; discards 3 non-null values of attribute LuxuryCar.price") == true, "\(history.last?.detail ?? "")")
    }

    @Test("a hop without data to discard reports nothing")
    func nothingToDiscard() throws {
        let (fixture, bundle) = try Self.cars()
        let queue = try DatabaseQueue(path: fixture.store.path)
        try queue.write { try $0.execute(sql: "UPDATE ZLUXURYCAR SET ZPRICE = NULL") }
        try queue.close()
        let report = try CoreDataStoreImporter(bundle: bundle, options: .init(toVersion: "Cars 3")).importStore(at: fixture.store, to: fixture.out)
        #expect(report.migration?.hops.first?.discarded == [])
        #expect(report.warnings == [])
    }

    @Test("allowsDiscards off: the import is refused, naming what would be lost; nothing is written")
    func refused() throws {
        let (fixture, bundle) = try Self.cars()
        var options = CoreDataStoreImporter.Options(toVersion: "Cars 3")
        options.allowsDiscards = false
        let error = try CoreDataImportBadInputTests.refused(fixture, .migrationFailed, options: options, bundle: bundle)
        #expect(error?.description.contains("hop 'Cars 2' -> 'Cars 3' would discard 3 non-null values of attribute LuxuryCar.price, and discarding is not allowed (--no-discard, or allow_discards: false in stratad.yaml)") == true,
                "\(String(describing: error))")
    }

    @Test("stratactl import-coredata: warning on stderr, DISCARDED line, JSON warnings; --no-discard exits 3; --dry-run creates nothing",
          .enabled(if: StratactlProcess.executable != nil))
    func importCommand() throws {
        let (fixture, bundle) = try Self.cars()
        let base = ["import-coredata", "--model", bundle.path, "--store", fixture.store.path, "--to", "Cars 3", "--quiet"]
        let dry = try StratactlProcess.run(base + ["--out", fixture.out.path, "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.hasPrefix("Dry run: would import \(fixture.store.path) into \(fixture.out.path) (nothing was written)\n"), "\(dry.stdout)")
        #expect(dry.stdout.contains("  Cars 2 -> Cars 3  [lightweight"), "\(dry.stdout)")
        #expect(dry.stdout.contains("    DISCARDED 3 non-null values of attribute LuxuryCar.price\n"), "\(dry.stdout)")
        #expect(fixture.outputListing() == [], "the dry run creates nothing next to --out")

        let refused = try StratactlProcess.run(base + ["--out", fixture.out.path, "--no-discard"])
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("would discard 3 non-null values of attribute LuxuryCar.price"), "\(refused.stderr)")
        #expect(fixture.outputListing() == [])

        let json = try StratactlProcess.run(base + ["--out", fixture.out.path, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stderr == "stratactl: warning: \(Self.warning)\n")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["warnings"] as? [String] == [Self.warning])
        let hops = (object["migration"] as? [String: Any])?["hops"] as? [[String: Any]]
        let discarded = hops?.first?["discarded"] as? [[String: Any]]
        #expect(discarded?.first?["count"] as? Int == 3)
        #expect(discarded?.first?["column"] as? String == "price")
    }

    @Test("stratactl migrate: the warning and counts; --no-discard exits 3 and leaves the store at its version",
          .enabled(if: StratactlProcess.executable != nil))
    func migrateCommand() throws {
        let (fixture, bundle) = try Self.cars()
        try CoreDataStoreImporter(bundle: bundle).importStore(at: fixture.store, to: fixture.out)
        let refused = try StratactlProcess.run(["migrate", fixture.out.path, "--model", bundle.path, "--to", "Cars 3", "--no-discard", "--quiet"])
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("would discard 3 non-null values of attribute LuxuryCar.price, and discarding is not allowed (--no-discard, or allow_discards: false in stratad.yaml)"), "\(refused.stderr)")
        #expect(try PersistentStore.metadata(at: fixture.out).modelVersion == "Cars 2")

        let run = try StratactlProcess.run(["migrate", fixture.out.path, "--model", bundle.path, "--to", "Cars 3", "--quiet"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr == "stratactl: warning: \(Self.warning)\n")
        #expect(run.stdout.contains("  Cars 2 -> Cars 3  [") && run.stdout.contains("\n    DISCARDED 3 non-null values of attribute LuxuryCar.price"), "\(run.stdout)")
        #expect(try PersistentStore.metadata(at: fixture.out).modelVersion == "Cars 3")
    }
}
