import Foundation
import GRDB
import Testing
@testable import Strata

/// SQLite-style fault injection (docs/Security.md, "Fault injection"): every read, write, sync,
/// lock and truncate of a store's files during open + migration, each deferred step (backup,
/// table rewrite, index build, drops, vacuum) and client writes fails in turn, and the machine
/// loses power at sampled writes (every write not yet synced discarded). After each: the
/// operation failed cleanly with an error naming the store (or absorbed the fault), the store
/// reopens with `integrity_check` ok, every row written before and every save acknowledged
/// is there, and finishing resumes to an empty ledger.
@Suite(.serialized, .timeLimit(.minutes(20)))
struct FaultInjectionTests {
    // MARK: - The scenario

    static let source = MigrationTestModels.model("Faults 1", [
        MigrationTestModels.aircraft(), MigrationTestModels.owner(),
        Entity("Hangar", attributes: [Attribute("code", .string)]),
    ])
    static let destination = MigrationTestModels.model("Faults 2", [
        MigrationTestModels.aircraft(attributes: [Attribute("tailNumber", .string, isOptional: false), Attribute("seats", .int16)],
                                     indexes: [Index("byTail", keyPaths: ["tailNumber"]), Index("byColor", keyPaths: ["colorScheme.primary"])]),
        MigrationTestModels.owner(),
    ])
    /// The staged chain's middle version: a custom stage fills `note`, a lightweight stage
    /// goes on to ``destination``.
    static let middle = MigrationTestModels.model("Faults 1b", [
        MigrationTestModels.aircraft(attributes: MigrationTestModels.defaultAttributes + [Attribute("note", .string)]),
        MigrationTestModels.owner(),
        Entity("Hangar", attributes: [Attribute("code", .string)]),
    ])
    static let stages = StagedMigrationManager(stages: [
        .custom(from: ModelReference(model: source), to: ModelReference(model: middle), label: "fill note",
                didMigrate: { stage in try stage.execute(sql: #"UPDATE "Aircraft" SET "note" = 'n-' || "_pk""#) }),
        .lightweight([middle.checksum, destination.checksum]),
    ], models: [source, middle, destination])
    static let rows = 300
    /// `sum(seats)` of the seeded rows (seats = pk % 7).
    static let seatSum = (1...rows).reduce(0) { $0 + $1 % 7 }
    /// Most fault points tried per kind and phase (evenly spread when there are more);
    /// `STRATA_FAULTS_ALL=1` tries every one (as for the figures in docs/Security.md).
    static let maxPointsPerKind = ProcessInfo.processInfo.environment["STRATA_FAULTS_ALL"] == "1" ? Int.max : 12

    enum Phase: String, CaseIterable, CustomTestStringConvertible {
        case openAndMigrate, stagedHops, finish, clientWrites
        var testDescription: String { rawValue }
    }

    static func migrationOptions(_ directory: URL) -> StoreOptions {
        StoreOptions(migration: MigrationOptions(deferCleanup: true, backup: directory.appendingPathComponent("backup.sqlite")))
    }

    /// The store file as it is just before `phase`, built once per test in `root/template`.
    static func template(_ phase: Phase, in root: URL) async throws -> URL {
        let directory = root.appendingPathComponent("template")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("store.sqlite")
        let store = try PersistentStore.open(at: url, model: source)
        try store.syncWrite { db in
            try db.execute(sql: #"INSERT INTO "Owner" ("_pk", "name") VALUES (1, 'Ann'), (2, 'Bob')"#)
            try db.execute(sql: #"INSERT INTO "Hangar" ("_pk", "code") VALUES (1, 'H1'), (2, 'H2')"#)
            for pk in 1...rows {
                try db.execute(sql: #"INSERT INTO "Aircraft" ("_pk", "tailNumber", "seats", "photo", "colorScheme_primary", "owner_id") VALUES (?, ?, ?, randomblob(64), ?, ?)"#,
                               arguments: [pk, "T-\(pk)", pk % 7, ["red", "blue", nil][pk % 3], pk % 2 + 1])
            }
        }
        try store.close()
        if phase == .openAndMigrate || phase == .stagedHops { return url }
        let migrated = try PersistentStore.open(at: url, model: destination, options: migrationOptions(directory))
        if phase == .clientWrites { try await migrated.finishDeferredMigration() }
        try migrated.close()
        try? FileManager.default.removeItem(at: directory.appendingPathComponent("backup.sqlite"))
        return url
    }

    /// A fresh copy of the template in its own directory (the fault scope).
    static func copy(_ template: URL, to directory: URL) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("store.sqlite")
        try FileManager.default.copyItem(at: template, to: url)
        return url
    }

    struct Outcome {
        var error: (any Error)?
        /// Tail numbers of the client saves that returned without error.
        var acknowledged: [String] = []
    }

    /// Runs `phase` on the store at `url`; `arm` is called where faults start counting.
    static func run(_ phase: Phase, at url: URL, arm: () -> Void) async -> Outcome {
        var outcome = Outcome()
        let directory = url.deletingLastPathComponent()
        var store: PersistentStore?
        do {
            switch phase {
            case .openAndMigrate:
                arm()
                store = try PersistentStore.open(at: url, model: destination, options: migrationOptions(directory))
            case .stagedHops:
                arm()
                store = try PersistentStore.open(at: url, model: destination, stagedMigration: stages, options: migrationOptions(directory))
            case .finish:
                store = try PersistentStore.open(at: url, model: destination, options: migrationOptions(directory))
                arm()
                try await store!.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(5)))
            case .clientWrites:
                store = try PersistentStore.open(at: url, model: destination)
                arm()
                let context = ObjectContext(store: store!)
                for index in 1...6 {
                    let tail = "ACK-\(index)"
                    do {
                        let object = try context.insert("Aircraft")
                        object["tailNumber"] = .string(tail)
                        object["seats"] = .int(Int64(index))
                        try context.save()
                        outcome.acknowledged.append(tail)
                    } catch {
                        context.rollback()
                        if outcome.error == nil { outcome.error = error }
                    }
                }
            }
        } catch {
            outcome.error = error
        }
        try? store?.close()
        return outcome
    }

    /// What must hold after any fault: reopen, integrity, rows, acknowledged saves, resume.
    static func verify(_ url: URL, _ outcome: Outcome, _ label: String, phase: Phase) async throws {
        if let error = outcome.error {
            let text = "\(error)"
            #expect(error is StoreError || error is ObjectContextError || error is MigrationError || error is StagedMigrationError, "\(label): not a store error: \(type(of: error)) \(text)")
            #expect(text.contains(url.path), "\(label): the error does not name the store: \(text)")
        }
        let directory = url.deletingLastPathComponent()
        // A staged chain resumes from its last completed hop; any other store migrates or opens.
        let store = phase == .stagedHops
            ? try PersistentStore.open(at: url, model: destination, stagedMigration: stages, options: migrationOptions(directory))
            : try PersistentStore.open(at: url, model: destination, options: migrationOptions(directory))
        defer { try? store.close() }
        func check(_ when: String) throws {
            let (integrity, seeded, seats, tails) = try store.syncRead { db in
                (try String.fetchOne(db, sql: "PRAGMA integrity_check"),
                 try Int.fetchOne(db, sql: #"SELECT count(*) FROM "Aircraft" WHERE "tailNumber" LIKE 'T-%'"#),
                 try Int.fetchOne(db, sql: #"SELECT sum("seats") FROM "Aircraft" WHERE "tailNumber" LIKE 'T-%'"#),
                 Set(try String.fetchAll(db, sql: #"SELECT "tailNumber" FROM "Aircraft""#)))
            }
            #expect(integrity == "ok", "\(label) \(when): integrity_check \(integrity ?? "nil")")
            #expect(seeded == rows, "\(label) \(when): \(seeded ?? -1) of \(rows) seeded rows")
            #expect(seats == seatSum, "\(label) \(when): seats sum \(seats ?? -1)")
            let lost = outcome.acknowledged.filter { !tails.contains($0) }
            #expect(lost.isEmpty, "\(label) \(when): acknowledged saves lost: \(lost)")
        }
        try check("after reopen")
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(50)))
        #expect(report.tasksRemaining == 0, "\(label): finishing did not resume to the end")
        #expect(try store.pendingDeferredWork().isEmpty, "\(label): ledger not empty after finishing")
        try check("after finishing")
    }

    /// Fault points of `count` operations: all of them, or an even spread.
    static func points(_ count: Int) -> [Int] {
        guard count > maxPointsPerKind else { return Array(stride(from: 1, through: count, by: 1)) }
        return (0..<maxPointsPerKind).map { 1 + $0 * (count - 1) / (maxPointsPerKind - 1) }
    }

    // MARK: - Tests

    @Test("every I/O fault in a phase fails cleanly and loses nothing", arguments: Phase.allCases)
    func ioFaults(_ phase: Phase) async throws {
        let root = TemporaryDirectory("faults")
        defer { FaultVFS.end() }
        let template = try await Self.template(phase, in: root.url)
        // A dry run counts the phase's operations of each kind.
        let dry = root.url.appendingPathComponent("dry")
        let dryURL = try Self.copy(template, to: dry)
        FaultVFS.scope(dry)
        var counts: [FaultVFS.Kind: Int] = [:]
        let clean = await Self.run(phase, at: dryURL) { FaultVFS.reset() }
        #expect(clean.error == nil, "\(phase) without faults: \(String(describing: clean.error))")
        for kind in FaultVFS.Kind.allCases { counts[kind] = FaultVFS.count(kind) }
        var fired = 0, tried = 0, failed = 0
        var errors: Set<String> = []
        for kind in FaultVFS.Kind.allCases {
            for (index, nth) in Self.points(counts[kind] ?? 0).enumerated() {
                for code in kind == .write && index % 2 == 1 ? [FaultVFS.full] : [kind.code] {
                    tried += 1
                    let directory = root.url.appendingPathComponent("\(kind)-\(nth)-\(code)")
                    let url = try Self.copy(template, to: directory)
                    FaultVFS.scope(directory)
                    let outcome = await Self.run(phase, at: url) { FaultVFS.arm(kind, nth: nth, code: code) }
                    let hit = FaultVFS.fired > 0
                    FaultVFS.reset()
                    guard hit else { continue }
                    fired += 1
                    if let error = outcome.error {
                        failed += 1
                        errors.insert(String("\(type(of: error)): \(error)".replacingOccurrences(of: directory.path, with: "…").prefix(160)))
                    }
                    try await Self.verify(url, outcome, "\(phase) \(kind) #\(nth) code \(code)", phase: phase)
                    try? FileManager.default.removeItem(at: directory)
                }
            }
        }
        print("fault points \(phase): operations \(counts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")); tried \(tried), fired \(fired), failed the operation \(failed)")
        for error in errors.sorted().prefix(12) { print("  \(error)") }
        #expect(fired > 0)
    }

    @Test("power loss at sampled writes keeps every acknowledged write", arguments: Phase.allCases)
    func powerLoss(_ phase: Phase) async throws {
        let root = TemporaryDirectory("powerloss")
        defer { FaultVFS.end() }
        let template = try await Self.template(phase, in: root.url)
        let dry = root.url.appendingPathComponent("dry")
        let dryURL = try Self.copy(template, to: dry)
        FaultVFS.scope(dry)
        _ = await Self.run(phase, at: dryURL) { FaultVFS.reset() }
        let writes = FaultVFS.count(.write)
        var points = 0, discarded = 0
        for nth in Self.points(writes) {
            let directory = root.url.appendingPathComponent("loss-\(nth)")
            let url = try Self.copy(template, to: directory)
            FaultVFS.scope(directory)
            FaultVFS.track(true)
            // The machine stops at this write: it and every later I/O fail; then the power
            // goes and every write not yet synced is gone.
            let outcome = await Self.run(phase, at: url) { FaultVFS.arm(.write, nth: nth, persistent: true) }
            let hit = FaultVFS.fired > 0
            FaultVFS.powerLoss()
            discarded += FaultVFS.discardedBytes
            FaultVFS.reset()
            guard hit else { continue }
            points += 1
            try await Self.verify(url, outcome, "\(phase) power loss at write #\(nth)", phase: phase)
            try? FileManager.default.removeItem(at: directory)
        }
        print("power loss \(phase): \(points) points over \(writes) writes, \(discarded) unsynced bytes discarded")
        #expect(points > 0)
    }
}
