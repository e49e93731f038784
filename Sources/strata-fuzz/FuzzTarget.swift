import Foundation
import Strata

/// One fuzz target: set up once, then run on each input. A target must not crash, hang or
/// trip AddressSanitizer on any input; errors thrown by the code under test are expected.
protocol FuzzTarget: AnyObject {
    static var name: String { get }
    init() throws
    func run(_ data: Data)
}

/// The targets by name.
enum FuzzTargets {
    static var all: [any FuzzTarget.Type] {
        [PredicateFuzzTarget.self, VarlinkFuzzTarget.self, ModelFileFuzzTarget.self, ConfigurationFuzzTarget.self, CoreDataFuzzTarget.self]
    }
    static var names: [String] { all.map { $0.name } }

    /// The target inputs go to (set once by `main`, before fuzzing starts).
    nonisolated(unsafe) static var current: (any FuzzTarget)?

    static func make(_ name: String) -> (any FuzzTarget)? {
        guard let type = all.first(where: { $0.name == name }) else { return nil }
        do {
            return try type.init()
        } catch {
            FileHandle.standardError.write(Data("strata-fuzz: cannot set up \(name): \(error)\n".utf8))
            return nil
        }
    }

    /// The directories targets created, removed by ``removeScratchDirectories()`` at exit.
    nonisolated(unsafe) static var scratchDirectories: [URL] = []

    /// A fresh directory for a target's files.
    static func scratchDirectory(_ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appending(path: "strata-fuzz-\(name)-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        scratchDirectories.append(url)
        return url
    }

    /// Removes every directory ``scratchDirectory(_:)`` made (registered with `atexit` by
    /// `main`, since libFuzzer ends the process with `exit`).
    static func removeScratchDirectories() {
        for url in scratchDirectories { try? FileManager.default.removeItem(at: url) }
        scratchDirectories.removeAll()
    }

    /// The model the predicate and Varlink targets query: inheritance, composites, every
    /// attribute type, to-one, one-to-many and many-to-many relationships.
    static let model = ObjectModel(version: "Fuzz 1", entities: [
        Entity("Vehicle",
               attributes: [
                   Attribute("name", .string), Attribute("serial", .uuid), Attribute("registered", .date),
                   Attribute("active", .bool), Attribute("hours", .double), Attribute("seats", .int32),
                   Attribute("price", .decimal), Attribute("website", .uri), Attribute("photo", .data), Attribute("small", .int16),
               ],
               composites: [CompositeAttribute("colorScheme", elements: [
                   .attribute(Attribute("primary", .string)),
                   .composite(CompositeAttribute("trim", elements: [.attribute(Attribute("finish", .string))])),
               ])],
               relationships: [
                   Relationship("owner", destination: "Person", inverse: "vehicles"),
                   Relationship("tags", destination: "Tag", inverse: "vehicles", toMany: true),
               ]),
        Entity("Aircraft", parent: "Vehicle", attributes: [Attribute("tailNumber", .string)]),
        Entity("Person",
               attributes: [Attribute("name", .string), Attribute("age", .int16)],
               relationships: [
                   Relationship("vehicles", destination: "Vehicle", inverse: "owner", toMany: true),
                   Relationship("manager", destination: "Person", inverse: "reports"),
                   Relationship("reports", destination: "Person", inverse: "manager", toMany: true, ordered: true),
               ]),
        Entity("Tag", attributes: [Attribute("label", .string)],
               relationships: [Relationship("vehicles", destination: "Vehicle", inverse: "tags", toMany: true)]),
    ])

    /// A store of ``model`` with a few rows, in `directory`.
    static func seededStore(in directory: URL) throws -> PersistentStore {
        var options = StoreOptions()
        options.logger.logLevel = .critical
        let store = try PersistentStore.open(at: directory.appending(path: "fuzz.sqlite"), model: model, options: options)
        let context = ObjectContext(store: store)
        let person = try context.insert("Person", values: ["name": "Ada", "age": Int64(36)])
        let tag = try context.insert("Tag", values: ["label": "red"])
        for i in 0..<3 {
            let aircraft = try context.insert("Aircraft", values: ["name": "A\(i)", "tailNumber": "F-\(i)", "hours": Double(i) * 1.5])
            try aircraft.setObject(person, forRelationship: "owner")
            try aircraft.addObject(tag, toRelationship: "tags")
        }
        try context.save()
        return store
    }
}
