import Crypto
import Foundation
import GRDB
import Testing
@testable import Strata

/// A hop after which stored objects would fail validation is refused before any write — at
/// open (the path the daemon takes too) and in staged migrations — unless a custom stage
/// fills them, whose result is validated before it commits.
@Suite("Migration safety: hops that would leave objects invalid")
struct MigrationSafetyTests {
    typealias M = MigrationTestModels

    /// A change whose validity depends on the stored objects, with how many of the base seed's
    /// objects break it.
    struct DataDependentChange: Sendable, CustomTestStringConvertible {
        var name: String
        var destination: ObjectModel
        var entity: String
        var property: String
        var code: MigrationError.Code
        /// Objects of ``MigrationTestModels/baseSeed`` that break the rule.
        var violations: Int
        var testDescription: String { name }
    }

    static let hangar = Entity("Hangar", attributes: [Attribute("code", .string)])
    static let license = Entity("License", attributes: [Attribute("number", .string)],
                                relationships: [Relationship("holder", destination: "Owner", inverse: "licenses")])

    static let changes: [DataDependentChange] = [
        DataDependentChange(name: "new non-optional attribute without default",
                            destination: M.model("Aircraft 2", [M.aircraft(attributes: M.defaultAttributes + [Attribute("serial", .string, isOptional: false)]), M.owner()]),
                            entity: "Aircraft", property: "serial", code: .missingDefault, violations: 3),
        DataDependentChange(name: "optional attribute becomes non-optional without default",
                            destination: M.model("Aircraft 2", [M.aircraft(attributes: [Attribute("tailNumber", .string, isOptional: false), Attribute("seats", .int16, isOptional: false), Attribute("photo", .data)]), M.owner()]),
                            entity: "Aircraft", property: "seats", code: .missingDefault, violations: 1),
        DataDependentChange(name: "new non-optional to-one",
                            destination: M.model("Aircraft 2", [M.aircraft(relationships: [Relationship("owner", destination: "Owner", inverse: "aircraft"), Relationship("hangar", destination: "Hangar", isOptional: false)]), M.owner(), hangar]),
                            entity: "Aircraft", property: "hangar", code: .invalidObjects, violations: 3),
        DataDependentChange(name: "new to-many with minCount 1",
                            destination: M.model("Aircraft 2", [M.aircraft(), Entity("Owner", attributes: [Attribute("name", .string)], relationships: [
                                Relationship("aircraft", destination: "Aircraft", inverse: "owner", toMany: true),
                                Relationship("licenses", destination: "License", inverse: "holder", toMany: true, minCount: 1)]), license]),
                            entity: "Owner", property: "licenses", code: .invalidObjects, violations: 2),
        // minCount alone is not part of the checksum: the hop exists because of the new attribute.
        DataDependentChange(name: "existing to-many gains minCount 2 in a hop",
                            destination: M.model("Aircraft 2", [M.aircraft(), M.owner(Relationship("aircraft", destination: "Aircraft", inverse: "owner", toMany: true, minCount: 2), extra: [Attribute("note", .string)])]),
                            entity: "Owner", property: "aircraft", code: .invalidObjects, violations: 1),
    ]

    /// A store at the base version with the base seed, closed (its WAL checkpointed away).
    static func seededStore(_ temp: TemporaryStore, seed: Bool = true) throws {
        let store = try temp.open(M.base)
        if seed { try store.database.write { db in for sql in M.baseSeed { try db.execute(sql: sql) } } }
        try store.close()
    }

    static func digest(_ url: URL) throws -> String {
        Data(SHA256.hash(data: try Data(contentsOf: url))).base64EncodedString()
    }

    // MARK: - Inference

    @Test("inference records a requirement instead of refusing", arguments: changes)
    func requirementRecorded(_ change: DataDependentChange) throws {
        let plan = try MigrationPlan.infer(from: M.base, to: change.destination)
        let requirement = try #require(plan.requirements.first { $0.entity == change.entity && $0.property == change.property }, "\(plan)")
        #expect(requirement.summary.contains("'\(change.entity).\(change.property)'"))
        #expect(plan.description.contains("REQUIRES existing objects: '\(change.entity).\(change.property)'"))
    }

    @Test("an unchanged non-optional property makes no requirement")
    func noRequirementWhenUnchanged() throws {
        let v2 = M.model("Aircraft 2", [M.aircraft(attributes: M.defaultAttributes + [Attribute("note", .string)]), M.owner()])
        #expect(try MigrationPlan.infer(from: M.base, to: v2).requirements.isEmpty)
    }

    // MARK: - At open

    @Test("opening with migration refuses, before any write, naming entity, property and how many objects", arguments: changes)
    func refusedAtOpen(_ change: DataDependentChange) throws {
        let temp = TemporaryStore()
        try Self.seededStore(temp)
        let before = try Self.digest(temp.url)
        let error = #expect(throws: StoreError.self) {
            try temp.open(change.destination, options: StoreOptions(migration: .immediate))
        }
        #expect(error?.code == .migrationRefused)
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("entity '\(change.entity)'"), "\(text)")
        #expect(text.contains("property '\(change.property)'"), "\(text)")
        #expect(text.contains("\(change.violations) existing '\(change.entity)' object"), "\(text)")
        #expect(text.contains("custom stage"), "\(text)")
        #expect(try Self.digest(temp.url) == before, "the store file must not change")
        let metadata = try PersistentStore.metadata(at: temp.url)
        #expect(metadata.modelVersion == "Aircraft 1")
        #expect(metadata.history.count == 1)
    }

    @Test("an empty store migrates: no object would be invalid", arguments: changes)
    func emptyStoreMigrates(_ change: DataDependentChange) throws {
        let temp = TemporaryStore()
        try Self.seededStore(temp, seed: false)
        let store = try temp.open(change.destination, options: StoreOptions(migration: .immediate))
        try store.close()
        #expect(try PersistentStore.metadata(at: temp.url).modelVersion == "Aircraft 2")
    }

    @Test("a requirement every stored object meets does not refuse")
    func metRequirementMigrates() throws {
        let temp = TemporaryStore()
        try Self.seededStore(temp)
        // Every seeded aircraft has an owner: the to-one may become non-optional.
        let v2 = M.model("Aircraft 2", [M.aircraft(relationships: [Relationship("owner", destination: "Owner", inverse: "aircraft", isOptional: false)]), M.owner()])
        let plan = try MigrationPlan.infer(from: M.base, to: v2)
        #expect(plan.requirements.map(\.property) == ["owner"])
        let store = try temp.open(v2, options: StoreOptions(migration: .immediate))
        try store.close()
        #expect(try PersistentStore.metadata(at: temp.url).modelVersion == "Aircraft 2")
    }

    // MARK: - Staged

    static let serialVersion = changes[0].destination

    static func customStage(_ sql: String) -> MigrationStage {
        .custom(from: ModelReference(model: M.base), to: ModelReference(model: serialVersion), label: "fill serial",
                didMigrate: { stage in try stage.execute(sql: sql) })
    }

    @Test("a custom stage that fills the values lets the hop run")
    func customStageFills() throws {
        let temp = TemporaryStore()
        try Self.seededStore(temp)
        let manager = StagedMigrationManager(stages: [Self.customStage(#"UPDATE "Aircraft" SET "serial" = 'S-' || "_pk""#)], models: [M.base, Self.serialVersion])
        try manager.migrateStore(at: temp.url)
        #expect(try temp.rawQueue().strings(#"SELECT "serial" FROM "Aircraft" ORDER BY "_pk""#) == ["S-1", "S-2", "S-3"])
        #expect(try PersistentStore.metadata(at: temp.url).modelVersion == "Aircraft 2")
    }

    @Test("a custom stage whose result is invalid is rolled back, naming what is missing")
    func customStageValidated() throws {
        let temp = TemporaryStore()
        try Self.seededStore(temp)
        let manager = StagedMigrationManager(stages: [Self.customStage(#"UPDATE "Aircraft" SET "serial" = 'S-' || "_pk" WHERE "_pk" < 3"#)], models: [M.base, Self.serialVersion])
        let error = #expect(throws: StagedMigrationError.self) { try manager.migrateStore(at: temp.url) }
        #expect(error?.code == .stageLeftInvalidObjects)
        #expect(error?.description.contains("1 'Aircraft' object has no value for non-optional 'serial'") == true, "\(String(describing: error))")
        #expect(error?.description.contains("rolled back") == true)
        #expect(try PersistentStore.metadata(at: temp.url).modelVersion == "Aircraft 1")
        #expect(try temp.rawQueue().strings(#"SELECT name FROM pragma_table_info('Aircraft') WHERE name = 'serial'"#).isEmpty)
    }

    @Test("a lightweight staged hop is refused before anything is written")
    func stagedLightweightRefused() throws {
        let temp = TemporaryStore()
        try Self.seededStore(temp)
        let before = try Self.digest(temp.url)
        let manager = StagedMigrationManager(stages: [.lightweight([M.base.checksum, Self.serialVersion.checksum])], models: [M.base, Self.serialVersion])
        let error = #expect(throws: StagedMigrationError.self) { try manager.migrateStore(at: temp.url) }
        #expect(error?.code == .invalidObjects)
        #expect(error?.description.contains("3 existing 'Aircraft' objects would have no value for non-optional 'serial'") == true, "\(String(describing: error))")
        #expect(error?.completedVersion == nil)
        #expect(try Self.digest(temp.url) == before)
    }

    @Test("a later lightweight hop counts the data the hops before it left")
    func laterHopRefused() throws {
        let temp = TemporaryStore()
        try Self.seededStore(temp)
        let v2 = M.model("Aircraft 2", [M.aircraft(attributes: M.defaultAttributes + [Attribute("serial", .string)]), M.owner()])
        let v3 = M.model("Aircraft 3", [M.aircraft(attributes: M.defaultAttributes + [Attribute("serial", .string, isOptional: false)]), M.owner()])
        let manager = StagedMigrationManager(stages: [.lightweight([M.base.checksum, v2.checksum, v3.checksum])], models: [M.base, v2, v3])
        let error = #expect(throws: StagedMigrationError.self) { try manager.migrateStore(at: temp.url) }
        #expect(error?.code == .invalidObjects)
        #expect(error?.completedVersion == "Aircraft 2")
        #expect(try PersistentStore.metadata(at: temp.url).modelVersion == "Aircraft 2")
    }

    // MARK: - Validation of stored objects

    @Test("StoreValidation counts invalid objects per entity and property")
    func storeValidation() throws {
        let temp = TemporaryStore()
        try Self.seededStore(temp)
        let queue = try temp.rawQueue()
        try queue.write { db in try db.execute(sql: #"UPDATE "Aircraft" SET "tailNumber" = NULL WHERE "_pk" = 2"#) }
        let strict = M.model("Aircraft 1", [M.aircraft(), M.owner(Relationship("aircraft", destination: "Aircraft", inverse: "owner", toMany: true, minCount: 2))])
        let violations = try queue.read { db in try StoreValidation.violations(of: strict, in: db) }
        #expect(violations.map(\.description).sorted() == [
            "1 'Aircraft' object has no value for non-optional 'tailNumber'",
            "1 'Owner' object holds a number of related objects outside at least 2 in to-many 'aircraft'",
        ])
    }
}
