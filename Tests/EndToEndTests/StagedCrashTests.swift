import Foundation
import GRDB
import Testing
@testable import Strata

/// Kill -9 tests of staged migration: `stratactl migrate` is killed inside each hop (after the
/// hop's work, before its commit) and between hops, for both shipped chains; each time the
/// reopened store is at a completed version with all its data, and running again completes.
@Suite("Crash safety of staged migration", .serialized)
struct StagedCrashTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let stratactl = root.appendingPathComponent(".build/debug/stratactl")
    static let examples = root.appendingPathComponent("Examples/StagedMigration")
    static let aircraftModels = root.appendingPathComponent("config/models/Aircraft")
    static let postModels = root.appendingPathComponent("config/models/Post")
    static let aircraft = try! ModelDirectory(url: aircraftModels)
    static let posts = try! ModelDirectory(url: postModels)

    // MARK: - Data

    static let tailNumbers = (1...30).map { "N\(500 + $0)" }
    static func flightData(_ i: Int) -> Data? { i % 3 == 0 ? nil : Data((0..<(40 + i)).map { UInt8(($0 * i) % 256) }) }

    /// An Aircraft store at `version` (1 or 2), flight data at version 2.
    static func aircraftStore(version: Int, at url: URL) throws {
        let store = try PersistentStore.open(at: url, model: aircraft.version(named: "Aircraft \(version)")!)
        let context = ObjectContext(store: store)
        for (i, tail) in tailNumbers.enumerated() {
            let a = try context.insert("Aircraft", values: ["tailNumber": tail, "aircraftType": "type \(i)", "colorScheme.primary": "c\(i % 4)"])
            if version == 2 { try a.setValue(flightData(i), forKeyPath: "flightData") }
        }
        try context.save()
        try store.close()
    }

    static func postContent(_ i: Int) -> String? {
        i == 3 ? nil : (0...(i % 3)).map { "Heading \($0) of \(i)" + ($0 == 1 ? "" : "\nText \($0) of \(i)") }.joined(separator: "\n\n")
    }
    static func postID(_ i: Int) -> UUID { UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", i))! }

    /// A Post 1 store with 10 posts.
    static func postStore(at url: URL) throws {
        let store = try PersistentStore.open(at: url, model: posts.version(named: "Post 1")!)
        let context = ObjectContext(store: store)
        for i in 1...10 {
            _ = try context.insert("Post", values: ["postID": postID(i), "date": Date(timeIntervalSince1970: Double(i) * 1000),
                                                    "color": "#\(i)\(i)\(i)", "content": postContent(i)])
        }
        try context.save()
        try store.close()
    }

    // MARK: - Running

    static func migrate(_ url: URL, models: URL, stages: URL, faultPoint: String?) throws -> (status: Int32, signaled: Bool, stderr: String) {
        let process = Process()
        process.executableURL = stratactl
        process.arguments = ["migrate", url.path, "--model", models.path, "--stages", stages.path, "--defer", "--quiet"]
        var environment = ProcessInfo.processInfo.environment
        environment["STRATA_FAULT_POINT"] = faultPoint
        process.environment = environment
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let data = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, process.terminationReason == .uncaughtSignal, String(decoding: data, as: UTF8.self))
    }

    // MARK: - Verifying

    /// Every aircraft is there at the store's version; at Aircraft 3 its flight data is a FlightData.
    static func verifyAircraft(_ url: URL, flightDataSeeded: Bool) throws -> String {
        let version = try PersistentStore.metadata(at: url).modelVersion
        let store = try PersistentStore.open(at: url, model: aircraft.version(named: version)!)
        defer { try? store.close() }
        let context = ObjectContext(store: store)
        let all = try context.fetch("Aircraft")
        #expect(Set(all.compactMap { $0["tailNumber"].stringValue }) == Set(tailNumbers), "at \(version)")
        for a in all {
            let i = tailNumbers.firstIndex(of: a["tailNumber"].stringValue ?? "")!
            #expect(a["aircraftType"] == .string("type \(i)"))
            #expect(a["colorScheme.primary"] == .string("c\(i % 4)"))
            let expected = flightDataSeeded ? flightData(i) : nil
            switch version {
            case "Aircraft 2": #expect(a["flightData"] == (expected.map(Value.data) ?? .null))
            case "Aircraft 3":
                let parameters = try a.objects(forRelationship: "flightParameters")
                #expect(parameters.map { $0["data"] } == (expected.map { [Value.data($0)] } ?? []), "\(a["tailNumber"])")
            default: break
            }
        }
        return version
    }

    static func sections(_ content: String?) -> [(String, String?)] {
        (content ?? "").components(separatedBy: "\n\n").filter { !$0.isEmpty }.map { part in
            guard let n = part.firstIndex(of: "\n") else { return (part, nil) }
            return (String(part[..<n]), String(part[part.index(after: n)...]))
        }
    }

    /// Every post is there with its values at the store's version.
    static func verifyPosts(_ url: URL) throws -> String {
        let version = try PersistentStore.metadata(at: url).modelVersion
        let number = Int(version.split(separator: " ").last!)!
        let store = try PersistentStore.open(at: url, model: posts.version(named: version)!)
        defer { try? store.close() }
        let context = ObjectContext(store: store)
        let all = try context.fetch("Post")
        #expect(all.count == 10, "at \(version)")
        for i in 1...10 {
            guard let p = all.first(where: { $0["postID"] == .uuid(postID(i)) }) else { Issue.record("post \(i) missing at \(version)"); continue }
            #expect(p["date"] == .date(Date(timeIntervalSince1970: Double(i) * 1000)))
            #expect(p[number == 1 ? "color" : "hexColor"] == .string("#\(i)\(i)\(i)"), "post \(i) at \(version)")
            if number < 3 {
                #expect(p["content"] == (postContent(i).map(Value.string) ?? .null))
            } else {
                let got = try p.objects(forRelationship: "sections").map { ($0["title"], $0["body"], $0["index"]) }
                let want = sections(postContent(i))
                #expect(got.count == want.count, "post \(i) at \(version)")
                for (k, (g, w)) in zip(got, want).enumerated() {
                    #expect(g.0 == .string(w.0) && g.1 == (w.1.map(Value.string) ?? .null) && g.2 == .int(Int64(k)), "post \(i) section \(k)")
                }
            }
            if number == 4 { #expect(p["softDelete"] == .bool(false)) }
        }
        return version
    }

    // MARK: - Tests

    /// (chain, store's starting version, fault point, version the store must be at after the kill)
    static let cases: [(String, Int, String, String)] = [
        ("Aircraft", 1, "staged.hop@1", "Aircraft 1"),
        ("Aircraft", 1, "staged.between-hops@1", "Aircraft 2"),
        ("Aircraft", 1, "staged.hop@2", "Aircraft 2"),
        ("Aircraft", 2, "staged.hop@1", "Aircraft 2"),
        ("Post", 1, "staged.hop@1", "Post 1"),
        ("Post", 1, "staged.between-hops@1", "Post 2"),
        ("Post", 1, "staged.hop@2", "Post 2"),
        ("Post", 1, "staged.between-hops@2", "Post 3"),
        ("Post", 1, "staged.hop@3", "Post 3"),
    ]

    @Test("SIGKILL inside or between hops leaves a completed version with all data; running again completes",
          arguments: cases.indices)
    func killDuringHop(_ index: Int) throws {
        let (chain, start, point, expectedVersion) = Self.cases[index]
        try #require(FileManager.default.isExecutableFile(atPath: Self.stratactl.path), "build stratactl first (swift build)")
        let directory = TemporaryFolder()
        let url = directory.url.appendingPathComponent("\(chain.lowercased()).sqlite")
        let models = chain == "Aircraft" ? Self.aircraftModels : Self.postModels
        let stages = Self.examples.appendingPathComponent("\(chain)/stages.yaml")
        if chain == "Aircraft" { try Self.aircraftStore(version: start, at: url) } else { try Self.postStore(at: url) }
        let verify = { () throws -> String in
            chain == "Aircraft" ? try Self.verifyAircraft(url, flightDataSeeded: start == 2) : try Self.verifyPosts(url)
        }

        let crashed = try Self.migrate(url, models: models, stages: stages, faultPoint: point)
        #expect(crashed.signaled && crashed.status == SIGKILL, "\(chain) \(point): expected SIGKILL; stderr: \(crashed.stderr)")
        #expect(try verify() == expectedVersion, "\(chain) \(point)")
        #expect(try PersistentStore.metadata(at: url).history.last?.toVersion == expectedVersion)

        let resumed = try Self.migrate(url, models: models, stages: stages, faultPoint: nil)
        #expect(!resumed.signaled && resumed.status == 0, "\(chain): resumed run failed: \(resumed.stderr)")
        #expect(try verify() == (chain == "Aircraft" ? "Aircraft 3" : "Post 4"))
        let history = try PersistentStore.metadata(at: url).history.filter { $0.kind == "staged" }.map(\.toVersion)
        #expect(Set(history).count == history.count, "each hop committed once: \(history)")
    }

    @Test("the shipped example stores migrate with the shipped stage files", arguments: ["Aircraft", "Post"])
    func shippedExamples(_ chain: String) throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.stratactl.path), "build stratactl first (swift build)")
        let shipped = Self.examples.appendingPathComponent(chain == "Aircraft" ? "Aircraft/aircraft-v2.sqlite" : "Post/post-v1.sqlite")
        let directory = TemporaryFolder()
        let url = directory.url.appendingPathComponent(shipped.lastPathComponent)
        if ProcessInfo.processInfo.environment["STRATA_WRITE_EXAMPLES"] == "1" {
            try? FileManager.default.removeItem(at: shipped)
            if chain == "Aircraft" { try Self.aircraftStore(version: 2, at: url) } else { try Self.postStore(at: url) }
            let store = try PersistentStore.open(at: url, model: PersistentStore.metadata(at: url).model)
            try store.checkpoint()
            try store.backup(to: shipped)
            try store.close()
            try FileManager.default.removeItem(at: url)
        }
        try FileManager.default.copyItem(at: shipped, to: url)
        let result = try Self.migrate(url, models: chain == "Aircraft" ? Self.aircraftModels : Self.postModels,
                                      stages: Self.examples.appendingPathComponent("\(chain)/stages.yaml"), faultPoint: nil)
        #expect(result.status == 0, "\(result.stderr)")
        let version = chain == "Aircraft" ? try Self.verifyAircraft(url, flightDataSeeded: true) : try Self.verifyPosts(url)
        #expect(version == (chain == "Aircraft" ? "Aircraft 3" : "Post 4"))
    }
}
