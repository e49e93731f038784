import Foundation
import GRDB
import Strata
import Testing

@Suite("Migration plan inference")
struct MigrationPlanTests {
    // MARK: - Helpers

    static func kindName(_ kind: MigrationOperation.Kind) -> String {
        String(String(describing: kind).prefix { $0 != "(" })
    }

    static func store(_ model: ObjectModel, seed: [String] = []) throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in
            for statement in StorageLayout(model: model).creationSQL { try db.execute(sql: statement) }
            for statement in seed { try db.execute(sql: statement) }
        }
        return queue
    }

    static func rows(_ db: Database, _ sql: String) throws -> [String] {
        try Row.fetchAll(db, sql: sql).map { row in
            row.databaseValues.map { value -> String in
                switch value.storage {
                case .null: return "NULL"
                case .int64(let i): return String(i)
                case .double(let d): return String(d)
                case .string(let s): return s
                case .blob(let b): return "x" + b.map { String(format: "%02x", $0) }.joined()
                }
            }.joined(separator: "|")
        }
    }

    // MARK: - Plans

    @Test("an identical model gives an empty plan")
    func identical() throws {
        let plan = try MigrationPlan.infer(from: MigrationTestModels.base, to: MigrationTestModels.base)
        #expect(plan.isEmpty)
        #expect(plan.sourceChecksum == plan.destinationChecksum)
    }

    @Test("plan operations, split and summaries", arguments: MigrationTestModels.cases)
    func planShape(_ change: MigrationCase) throws {
        let plan = try MigrationPlan.infer(from: change.source, to: change.destination)
        let described = plan.operations.map { (Self.kindName($0.kind), $0.isDeferrable) }
        for (kind, deferrable) in change.expectedOperations {
            #expect(described.contains { $0 == (kind, deferrable) }, "expected \(deferrable ? "deferred" : "sync") \(kind) in\n\(plan)")
        }
        // Synchronous operations come first, and every operation explains itself.
        let firstDeferred = plan.operations.firstIndex(where: \.isDeferrable) ?? plan.operations.count
        let tailIsDeferred = plan.operations[firstDeferred...].allSatisfy { $0.isDeferrable }
        #expect(tailIsDeferred)
        #expect(plan.operations.allSatisfy { !$0.summary.isEmpty })
        #expect(plan.sourceVersion == change.source.version && plan.destinationVersion == change.destination.version)
        // Plans survive a JSON round trip (the ledger stores them).
        let data = try JSONEncoder().encode(plan)
        #expect(try JSONDecoder().decode(MigrationPlan.self, from: data) == plan)
    }

    // MARK: - Executed-plan invariant

    @Test("executed plan gives the fresh destination schema and keeps the data", arguments: MigrationTestModels.cases)
    func executedPlan(_ change: MigrationCase) throws {
        let plan = try MigrationPlan.infer(from: change.source, to: change.destination)
        let queue = try Self.store(change.source, seed: change.seed)
        try queue.writeWithoutTransaction { db in try plan.apply(to: db, includingDeferrable: false) }

        // After the synchronous part, every destination column exists: the app can run.
        let destination = StorageLayout(model: change.destination)
        try queue.read { db in
            for table in destination.tables.values {
                let columns = try db.columns(in: table.name).map(\.name)
                for column in table.columns { #expect(columns.contains(column.name), "\(table.name).\(column.name) missing after the synchronous part\n\(plan)") }
            }
            for join in destination.joinTables.values {
                let columns = try db.columns(in: join.name).map(\.name)
                for column in join.columnNames { #expect(columns.contains(column), "\(join.name).\(column) missing after the synchronous part") }
            }
            for index in destination.indexes where index.isUnique {
                #expect(try db.indexes(on: index.table).contains { $0.name == index.name }, "unique index \(index.name) missing after the synchronous part")
            }
        }

        try queue.writeWithoutTransaction { db in
            for op in plan.deferrable {
                if op.requiresForeignKeysOff { try db.execute(sql: "PRAGMA foreign_keys = OFF") }
                try db.inTransaction { try op.execute(in: db); return .commit }
                if op.requiresForeignKeysOff { try db.execute(sql: "PRAGMA foreign_keys = ON") }
            }
        }
        let fresh = try Self.store(change.destination)
        let migratedSchema = try queue.read(SchemaSnapshot.of)
        let freshSchema = try fresh.read(SchemaSnapshot.of)
        #expect(migratedSchema == freshSchema, "schema differs\n\(plan)\nmigrated: \(migratedSchema.filter { !freshSchema.contains($0) })\nfresh: \(freshSchema.filter { !migratedSchema.contains($0) })")
        try queue.read { db in
            for (sql, expected) in change.checks {
                let got = try Self.rows(db, sql)
                #expect(got == expected, "\(sql)")
            }
            let violations = try Row.fetchAll(db, sql: "PRAGMA foreign_key_check")
            #expect(violations.isEmpty)
        }
    }

    @Test("leftover storage stays until the deferred part runs")
    func leftoversAfterSynchronousPart() throws {
        let change = MigrationTestModels.cases.first { $0.name == "remove attribute" }!
        let plan = try MigrationPlan.infer(from: change.source, to: change.destination)
        #expect(plan.synchronous.isEmpty)
        let rewrite = try #require(plan.deferrable.first { Self.kindName($0.kind) == "rewriteTable" })
        #expect(rewrite.summary.contains("drop column photo (attribute Aircraft.photo removed in Aircraft 2)"))
        guard case .rewriteTable(let payload) = rewrite.kind else { Issue.record("not a rewrite"); return }
        #expect(payload.droppedColumns == ["photo"])
        #expect(payload.table == "Aircraft" && payload.columns.contains("tailNumber") && !payload.columns.contains("photo"))
        let queue = try Self.store(change.source, seed: change.seed)
        try queue.writeWithoutTransaction { db in try plan.apply(to: db, includingDeferrable: false) }
        #expect(try queue.read { try $0.columns(in: "Aircraft").map(\.name) }.contains("photo"))
        try queue.writeWithoutTransaction { db in try plan.apply(to: db) }
        #expect(try !queue.read { try $0.columns(in: "Aircraft").map(\.name) }.contains("photo"))
    }

    @Test("a uniqueness constraint violated by stored rows fails with the entity and keypaths")
    func uniquenessViolation() throws {
        let change = MigrationTestModels.cases.first { $0.name == "add uniqueness constraint" }!
        let plan = try MigrationPlan.infer(from: change.source, to: change.destination)
        let queue = try Self.store(change.source, seed: change.seed + [#"INSERT INTO "Aircraft" ("_pk", "tailNumber") VALUES (9, 'N123')"#])
        do {
            try queue.writeWithoutTransaction { db in try plan.apply(to: db) }
            Issue.record("expected a uniqueness violation")
        } catch let error as MigrationError {
            #expect(error.code == .uniquenessViolation)
            #expect(error.entity == "Aircraft")
            #expect(error.description.contains("tailNumber") && error.description.contains("N123"))
        }
        // Nothing was written: the synchronous transaction rolled back.
        #expect(try queue.read { try $0.indexes(on: "Aircraft").map(\.name) }.contains("Aircraft_unique_tailNumber") == false)
    }

    // MARK: - Refusals

    @Test("non-inferable changes are refused with entity, property and change", arguments: MigrationTestModels.refusals)
    func refused(_ refusal: MigrationTestModels.Refusal) {
        do {
            _ = try MigrationPlan.infer(from: MigrationTestModels.base, to: refusal.destination)
            Issue.record("expected \(refusal.code)")
        } catch {
            #expect(error.code == refusal.code, "\(error)")
            #expect(error.entity == refusal.entity, "\(error)")
            if let property = refusal.property { #expect(error.property == property, "\(error)") }
            #expect(error.description.contains("'Aircraft 1' -> 'Aircraft 2'"))
            #expect(error.description.contains("entity '\(refusal.entity)'"))
            for text in refusal.mentions { #expect(error.description.contains(text), "\(error) should mention \(text)") }
        }
    }

    @Test("renaming identifiers equal to the old name, or naming an older version, still match")
    func renamingIdentifierFallbacks() throws {
        let same = MigrationTestModels.model("Aircraft 2", [
            MigrationTestModels.aircraft(attributes: [
                Attribute("tailNumber", .string, isOptional: false, renamingIdentifier: "tailNumber"),
                Attribute("seats", .int16, renamingIdentifier: "numberOfSeats"),  // names a v0 property
                Attribute("photo", .data),
            ]), MigrationTestModels.owner(),
        ])
        #expect(try MigrationPlan.infer(from: MigrationTestModels.base, to: same).isEmpty)
    }
}
