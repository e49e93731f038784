import Foundation
import GRDB
import Testing
@testable import Strata

/// The shipped scenarios of staged migration, with the handlers an app would write.
///
/// 1. WWDC 2023 Aircraft: `Aircraft 1` → `Aircraft 2` lightweight (adds `flightData`),
///    `Aircraft 2` → `Aircraft 3` custom: a `FlightData` object per aircraft with flight
///    data, related to it; `flightData` removed with its cleanup deferred.
/// 2. Progressive Post: `Post 1` → `Post 2` (rename) → `Post 3` (custom: `content` split into
///    `Section` objects) → `Post 4` (adds `softDelete`).
enum StagedScenarios {
    static let aircraftDirectory = try! ModelDirectory(url: ModelFileFixtures.configModels.appending(path: "Aircraft"))
    static let postDirectory = try! ModelDirectory(url: ModelFileFixtures.configModels.appending(path: "Post"))
    static func aircraft(_ n: Int) -> ObjectModel { aircraftDirectory.version(named: "Aircraft \(n)")! }
    static func post(_ n: Int) -> ObjectModel { postDirectory.version(named: "Post \(n)")! }

    // MARK: - Aircraft

    /// `willMigrate` (on Aircraft 2) drops empty blobs; `didMigrate` (on Aircraft 3, where the
    /// removed `flightData` is still readable) moves each blob into a FlightData object.
    static let moveFlightData = MigrationStage.custom(
        from: ModelReference(version: "Aircraft 2", in: ModelFileFixtures.configModels.appending(path: "Aircraft"), checksum: aircraft(2).checksum),
        to: ModelReference(file: ModelFileFixtures.configModels.appending(path: "Aircraft/Aircraft 3.yaml"), checksum: aircraft(3).checksum),
        label: "move flightData into FlightData",
        willMigrate: { stage in
            for aircraft in try stage.context.fetch("Aircraft", where: "flightData != nil") where aircraft["flightData"] == .data(Data()) {
                aircraft["flightData"] = .null
            }
        },
        didMigrate: { stage in
            let context = stage.context
            for aircraft in try context.fetch("Aircraft", where: "flightData != nil", sortedBy: [FetchSortDescriptor("tailNumber")]) {
                let flightData = try context.insert("FlightData", values: ["data": aircraft["flightData"]])
                try flightData.setObject(aircraft, forRelationship: "aircraft")
            }
        })

    static let aircraftManager = StagedMigrationManager(stages: [
        .lightweight([aircraft(1).checksum, aircraft(2).checksum], label: "add flightData"),
        moveFlightData,
    ], directory: aircraftDirectory)

    struct AircraftRow: Hashable {
        var tailNumber: String, type: String?, primary: String?, photo: Data?, flightData: Data?
    }

    static let aircraftRows: [AircraftRow] = (1...12).map { (i: Int) -> AircraftRow in
        let type: String = i % 2 == 0 ? "A320" : "B737"
        let primary: String? = i % 3 == 0 ? nil : ["red", "blue"][i % 2]
        let photo: Data? = i % 4 == 0 ? nil : Data("photo \(i)".utf8)
        var flightData: Data? = nil
        if i % 3 == 1 {
            flightData = Data((0..<(i * 10)).map { (b: Int) -> UInt8 in UInt8(b % 251) })
        } else if i == 5 {
            flightData = Data()
        }
        return AircraftRow(tailNumber: "N\(100 + i)", type: type, primary: primary, photo: photo, flightData: flightData)
    }

    /// A store at `version` (1 or 2) holding `aircraftRows` (flight data only at version 2).
    static func aircraftStore(version: Int, at url: URL) throws {
        let store = try PersistentStore.open(at: url, model: aircraft(version))
        let context = ObjectContext(store: store)
        for row in aircraftRows {
            let a = try context.insert("Aircraft", values: ["tailNumber": row.tailNumber, "aircraftType": row.type,
                                                            "colorScheme.primary": row.primary, "photo": row.photo])
            if version >= 2 { try a.setValue(row.flightData, forKeyPath: "flightData") }
        }
        try context.save()
        try store.close()
    }

    /// Every aircraft with its values, and one FlightData per (non-empty) blob, related to it.
    static func verifyAircraft(_ store: PersistentStore, withFlightData: Bool) throws {
        let context = ObjectContext(store: store)
        let all = try context.fetch("Aircraft", sortedBy: [FetchSortDescriptor("tailNumber")])
        #expect(all.count == aircraftRows.count)
        for row in aircraftRows {
            guard let a = all.first(where: { $0["tailNumber"].stringValue == row.tailNumber }) else {
                Issue.record("aircraft \(row.tailNumber) is missing"); continue
            }
            #expect(a["aircraftType"] == (row.type.map(Value.string) ?? .null))
            #expect(a["colorScheme.primary"] == (row.primary.map(Value.string) ?? .null))
            #expect(a["photo"] == (row.photo.map(Value.data) ?? .null))
            let parameters = try a.objects(forRelationship: "flightParameters")
            if withFlightData, let data = row.flightData, !data.isEmpty {
                #expect(parameters.count == 1, "\(row.tailNumber)")
                #expect(parameters.first?["data"] == .data(data))
            } else {
                #expect(parameters.isEmpty, "\(row.tailNumber)")
            }
        }
        let expected = withFlightData ? aircraftRows.filter { !($0.flightData ?? Data()).isEmpty }.count : 0
        #expect(try context.count("FlightData") == expected)
    }

    // MARK: - Post

    /// `content` is paragraphs separated by a blank line; a paragraph's first line is its
    /// section's title, the rest its body (nil when there is none).
    static func sections(of content: String) -> [(title: String, body: String?)] {
        content.components(separatedBy: "\n\n").filter { !$0.isEmpty }.map { part in
            guard let newline = part.firstIndex(of: "\n") else { return (part, nil) }
            return (String(part[..<newline]), String(part[part.index(after: newline)...]))
        }
    }

    static let splitContent = MigrationStage.custom(
        from: ModelReference(version: "Post 2", in: ModelFileFixtures.configModels.appending(path: "Post"), checksum: post(2).checksum),
        to: ModelReference(model: post(3), checksum: post(3).checksum),
        label: "split content into sections",
        didMigrate: { stage in
            let context = stage.context
            for post in try context.fetch("Post", where: "content != nil") {
                for (index, section) in sections(of: post["content"].stringValue ?? "").enumerated() {
                    let object = try context.insert("Section", values: ["title": section.title, "body": section.body, "index": index])
                    try post.addObject(object, toRelationship: "sections")
                }
            }
        })

    struct PostRow {
        var postID: UUID, date: Date?, color: String?, content: String?
    }

    static let postRows: [PostRow] = (1...10).map { i in
        let content: String? = i == 7 ? nil : (1...(i % 3 + 1)).map { s in s == 2 && i % 2 == 0 ? "Title \(s) of \(i)" : "Title \(s) of \(i)\nBody \(s) of post \(i)\nline two" }.joined(separator: "\n\n")
        return PostRow(postID: UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", i))!,
                       date: i == 4 ? nil : Date(timeIntervalSince1970: 1_700_000_000 + Double(i) * 86_400),
                       color: i == 9 ? nil : String(format: "#%06X", i * 0x111111), content: content)
    }

    /// A store at `version` (1, 2 or 3) holding `postRows`.
    static func postStore(version: Int, at url: URL) throws {
        let store = try PersistentStore.open(at: url, model: post(version))
        let context = ObjectContext(store: store)
        for row in postRows {
            let p = try context.insert("Post", values: ["postID": row.postID, "date": row.date])
            try p.setValue(row.color, forKeyPath: version == 1 ? "color" : "hexColor")
            if version < 3 {
                try p.setValue(row.content, forKeyPath: "content")
            } else {
                for (index, section) in sections(of: row.content ?? "").enumerated() {
                    try p.addObject(try context.insert("Section", values: ["title": section.title, "body": section.body, "index": index]),
                                    toRelationship: "sections")
                }
            }
        }
        try context.save()
        try store.close()
    }

    /// Every post at Post 4 with every value, its sections in order.
    static func verifyPosts(_ store: PersistentStore) throws {
        let context = ObjectContext(store: store)
        let posts = try context.fetch("Post")
        #expect(posts.count == postRows.count)
        for row in postRows {
            guard let p = posts.first(where: { $0["postID"] == .uuid(row.postID) }) else {
                Issue.record("post \(row.postID) is missing"); continue
            }
            #expect(p["date"] == (row.date.map(Value.date) ?? .null))
            #expect(p["hexColor"] == (row.color.map(Value.string) ?? .null))
            #expect(p["softDelete"] == .bool(false))
            let expected = sections(of: row.content ?? "")
            let got = try p.objects(forRelationship: "sections")
            #expect(got.count == expected.count, "post \(row.postID)")
            for (index, (section, want)) in zip(got, expected).enumerated() {
                #expect(section["title"] == .string(want.title))
                #expect(section["body"] == (want.body.map(Value.string) ?? .null))
                #expect(section["index"] == .int(Int64(index)))
            }
        }
        #expect(try context.count("Section") == postRows.reduce(0) { $0 + sections(of: $1.content ?? "").count })
    }

    static func columns(_ store: PersistentStore, _ table: String) throws -> [String] {
        try store.database.read { db in try db.columns(in: table).map(\.name) }
    }

    static func snapshot(_ store: PersistentStore) throws -> [String] { try store.database.read(SchemaSnapshot.of) }

    static func freshSchema(_ model: ObjectModel) throws -> [String] {
        let directory = TemporaryDirectory("fresh")
        let store = try PersistentStore.open(at: directory.file("fresh.sqlite"), model: model)
        defer { try? store.close() }
        return try store.database.read(SchemaSnapshot.of)
    }
}

@Suite("Staged migration scenarios: WWDC Aircraft and progressive Post")
struct StagedScenarioTests {
    typealias S = StagedScenarios

    @Test("Aircraft 1 -> 2 lightweight, flight data added, 2 -> 3 custom: every aircraft and its data survive")
    func aircraftFromVersion1() throws {
        let directory = TemporaryDirectory("aircraft")
        let url = directory.file("aircraft.sqlite")
        try S.aircraftStore(version: 1, at: url)
        // Stage 1 only, then the app (at Aircraft 2) records flight data.
        let first = try S.aircraftManager.migrateStore(at: url, options: StagedMigrationOptions(stopAfterVersion: "Aircraft 2"))
        #expect(first.endVersion == "Aircraft 2" && first.hops.count == 1)
        do {
            let store = try PersistentStore.open(at: url, model: S.aircraft(2))
            let context = ObjectContext(store: store)
            for a in try context.fetch("Aircraft") {
                let row = S.aircraftRows.first { .string($0.tailNumber) == a["tailNumber"] }!
                try a.setValue(row.flightData, forKeyPath: "flightData")
            }
            try context.save()
            try store.close()
        }
        let store = try PersistentStore.open(at: url, model: S.aircraft(3), stagedMigration: S.aircraftManager)
        defer { try? store.close() }
        try S.verifyAircraft(store, withFlightData: true)
        let metadata = try store.currentMetadata()
        #expect(metadata.history.map(\.kind) == ["created", "staged", "staged"])
        #expect(metadata.history.last?.detail.contains("move flightData into FlightData") == true)
    }

    @Test("Aircraft 2 -> 3 with deferred cleanup: flightData stays on disk until finished, then the schema is fresh")
    func aircraftDeferredCleanup() async throws {
        let directory = TemporaryDirectory("aircraft")
        let url = directory.file("aircraft.sqlite")
        try S.aircraftStore(version: 2, at: url)
        let report = try S.aircraftManager.migrateStore(at: url, options: StagedMigrationOptions(deferCleanup: true))
        #expect(report.startVersion == "Aircraft 2" && report.endVersion == "Aircraft 3")
        #expect(report.pendingDeferredTasks > 0)
        let store = try PersistentStore.open(at: url, model: S.aircraft(3))
        defer { try? store.close() }
        let columns = try S.columns(store, "Aircraft")
        #expect(columns.contains("flightData"), "the removed column's drop is deferred")
        #expect(try store.pendingDeferredWork().contains { $0.summary.contains("flightData") })
        try S.verifyAircraft(store, withFlightData: true)
        try await store.finishDeferredMigration()
        #expect(try store.pendingDeferredWork().isEmpty)
        #expect(try S.snapshot(store) == S.freshSchema(S.aircraft(3)))
        try S.verifyAircraft(store, withFlightData: true)
    }

    @Test("Aircraft without deferral: cleanup runs before returning, schema is fresh")
    func aircraftImmediateCleanup() throws {
        let directory = TemporaryDirectory("aircraft")
        let url = directory.file("aircraft.sqlite")
        try S.aircraftStore(version: 2, at: url)
        let report = try S.aircraftManager.migrateStore(at: url, options: StagedMigrationOptions(deferCleanup: false))
        #expect(report.pendingDeferredTasks == 0)
        let store = try PersistentStore.open(at: url, model: S.aircraft(3))
        defer { try? store.close() }
        #expect(try store.database.read(SchemaSnapshot.of) == S.freshSchema(S.aircraft(3)))
        try S.verifyAircraft(store, withFlightData: true)
    }

    @Test("a throwing handler rolls the stage back: the store stays at Aircraft 2 with its data")
    func handlerThrows() throws {
        struct Refused: Error, CustomStringConvertible { var description: String { "no FlightData today" } }
        let directory = TemporaryDirectory("aircraft")
        let url = directory.file("aircraft.sqlite")
        try S.aircraftStore(version: 2, at: url)
        let failing = StagedMigrationManager(stages: [
            .custom(from: ModelReference(model: S.aircraft(2)), to: ModelReference(model: S.aircraft(3)), label: "refuses",
                    didMigrate: { stage in
                        _ = try stage.context.insert("FlightData", values: ["data": Data([1])])
                        try stage.context.save()
                        throw Refused()
                    }),
        ])
        let error = #expect(throws: StagedMigrationError.self) { try failing.migrateStore(at: url) }
        #expect(error?.code == .handlerFailed)
        #expect(error?.completedVersion == "Aircraft 2")
        #expect(error?.description.contains("no FlightData today") == true)
        #expect(try PersistentStore.metadata(at: url).modelVersion == "Aircraft 2")
        let store = try PersistentStore.open(at: url, model: S.aircraft(2))
        defer { try? store.close() }
        #expect(try store.database.read { db in try db.tableExists("FlightData") } == false)
        #expect(try ObjectContext(store: store).count("Aircraft", where: "flightData != nil") == S.aircraftRows.filter { $0.flightData != nil }.count)
    }

    @Test("Post stores at v1, v2 and v3 migrate to v4 with every value", arguments: [1, 2, 3])
    func postToVersion4(_ version: Int) throws {
        let directory = TemporaryDirectory("post")
        let url = directory.file("post.sqlite")
        try S.postStore(version: version, at: url)
        let metadata = try PersistentStore.metadata(at: url)
        let path = try ProgressiveMigrationGraph(directory: S.postDirectory)
            .path(fromChecksum: metadata.modelChecksum, storeVersion: metadata.modelVersion, to: "Post 4")
        #expect(path.versions.map(\.version) == (version...4).map { "Post \($0)" })
        var phases: [StagedMigrationProgress.Phase] = []
        let report = try path.manager(customStages: [S.splitContent]).migrateStore(at: url) { phases.append($0.phase) }
        #expect(report.hops.count == 4 - version)
        #expect(report.endVersion == "Post 4")
        #expect(phases.last == .finished)
        #expect(phases.filter { $0 == .hopCommitted }.count == 4 - version)
        #expect(phases.contains(.didMigrate) == (version <= 2))
        let store = try PersistentStore.open(at: url, model: S.post(4))
        defer { try? store.close() }
        try S.verifyPosts(store)
        #expect(try store.currentMetadata().history.filter { $0.kind == "staged" }.map(\.toVersion) == (version + 1...4).map { "Post \($0)" }.filter { _ in version < 4 })
    }

    @Test("a backup is written before the first hop and reported")
    func backup() throws {
        let directory = TemporaryDirectory("post")
        let url = directory.file("post.sqlite")
        let backupURL = directory.file("backups/post-v1.sqlite")
        try S.postStore(version: 1, at: url)
        let manager = try ProgressiveMigrationGraph(directory: S.postDirectory).path(from: S.post(1), to: S.post(4)).manager(customStages: [S.splitContent])
        let report = try manager.migrateStore(at: url, options: StagedMigrationOptions(backupURL: backupURL))
        #expect(report.backupURL == backupURL)
        #expect(try PersistentStore.metadata(at: backupURL).modelVersion == "Post 1")
        let backup = try PersistentStore.open(at: backupURL, model: S.post(1))
        defer { try? backup.close() }
        #expect(try ObjectContext(store: backup).count("Post") == 10)
        // A second run refuses to overwrite the backup.
        let again = #expect(throws: StagedMigrationError.self) { try manager.migrateStore(at: url, options: StagedMigrationOptions(backupURL: backupURL)) }
        #expect(again?.description.contains("already exists") == true)
    }
}
