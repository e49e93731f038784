import Foundation
import GRDB
import Testing
@testable import Strata

/// Both sides of a one-to-one must agree: `InverseConsistency` counts disagreements,
/// `inspect --check` reports them, and a custom stage that sets one side only is rolled back.
@Suite("One-to-one relationships: both sides agree")
struct InverseConsistencyTests {
    /// The Shop store imported at `Shop` (Customer.buddy ↔ Pet.owner, consistent).
    static func imported() throws -> (CoreDataFixture, URL, URL) {
        let (fixture, bundle) = try CoreDataMappingModelTests.shop()
        try CoreDataStoreImporter(bundle: bundle, options: .init()).importStore(at: fixture.store, to: fixture.out)
        return (fixture, bundle, fixture.out)
    }

    static func mismatches(_ url: URL, model: ObjectModel) throws -> [InverseConsistency.Mismatch] {
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        return try queue.read { try InverseConsistency.mismatches(of: model, in: $0) }
    }

    @Test("consistent sides: none; one side cleared: counted in the direction that disagrees")
    func counts() throws {
        let (fixture, bundle, store) = try Self.imported()
        defer { withExtendedLifetime(fixture) {} }
        let model = try #require(try ModelDirectory(url: bundle).version(named: "Shop"))
        #expect(try Self.mismatches(store, model: model) == [])
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { try $0.execute(sql: #"UPDATE "Pet" SET "owner_id" = NULL WHERE "_pk" = 2"#) }
        try queue.close()
        let found = try Self.mismatches(store, model: model)
        #expect(found == [.init(entity: "Customer", relationship: "buddy", inverseEntity: "Pet", inverse: "owner", count: 1)])
        #expect(found.first?.description == "1 Customer object(s) have a buddy whose owner is not them (the two sides of the one-to-one Customer.buddy ↔ Pet.owner disagree; set both sides)")
    }

    @Test("a custom stage that sets one side of a one-to-one is rolled back, naming both sides")
    func stageRefused() throws {
        let (fixture, bundle, store) = try Self.imported()
        let stages = fixture.directory.file("stages.yaml")
        try #"stages: [{label: one side, from: Shop, to: Shop 2, didMigrate: "UPDATE \"Customer\" SET \"companion_id\" = \"buddy_id\";"}]"#
            .write(to: stages, atomically: true, encoding: .utf8)
        let directory = try ModelDirectory(url: bundle)
        let manager = try ProgressiveMigrationGraph(directory: directory).path(from: directory.version(named: "Shop")!, to: directory.version(named: "Shop 2")!)
            .manager(customStages: MigrationStageFile.load(contentsOf: stages, directory: directory))
        let error = #expect(throws: StagedMigrationError.self) { try manager.migrateStore(at: store) }
        #expect(error?.code == .stageLeftInvalidObjects)
        #expect(error?.description.contains("2 Customer object(s) have a companion whose keeper is not them (the two sides of the one-to-one Customer.companion ↔ Pet.keeper disagree; set both sides)") == true,
                "\(String(describing: error))")
        #expect(try PersistentStore.metadata(at: store).modelVersion == "Shop")
    }

    @Test("stratactl inspect --check reports the disagreement and exits 1", .enabled(if: StratactlProcess.executable != nil))
    func inspectCheck() throws {
        let (fixture, _, store) = try Self.imported()
        defer { withExtendedLifetime(fixture) {} }
        let ok = try StratactlProcess.run(["inspect", "--check", store.path])
        #expect(ok.status == 0, "\(ok.stdout)\(ok.stderr)")
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { try $0.execute(sql: #"UPDATE "Customer" SET "buddy_id" = 3 WHERE "_pk" = 3"#) }
        try queue.close()
        let bad = try StratactlProcess.run(["inspect", "--check", store.path])
        #expect(bad.status == 1)
        #expect(bad.stdout.contains("inverse: 1 Customer object(s) have a buddy whose owner is not them"), "\(bad.stdout)")
    }
}
