import Foundation
import Strata

/// A temporary directory with an Aircraft store (the example model's current version) holding
/// five aircraft, for the `stratactl` tests. Removed by ``remove()``.
struct CLIFixture {
    let directory: URL
    let storeURL: URL
    let model: ObjectModel

    var store: String { storeURL.path }

    /// `(tailNumber, aircraftType, primary, secondary, tertiary)`
    static let aircraft: [(String, String, String, String?, String?)] = [
        ("F-GSPT", "A320", "red", "white", nil),
        ("F-HBXA", "A321", "blue", "white", "red"),
        ("N12345", "B737", "red", nil, nil),
        ("G-EUPT", "A319", "green", "yellow", "blue"),
        ("D-AIZZ", "A320", "blue", "grey", nil),
    ]

    init() throws {
        directory = FileManager.default.temporaryDirectory.appending(path: "strata-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        storeURL = directory.appending(path: "aircraft.sqlite")
        model = try ModelDirectory(url: BuiltBinary.packageRoot.appending(path: "config/models/Aircraft")).current
        let store = try PersistentStore.open(at: storeURL, model: model)
        let context = ObjectContext(store: store)
        for (tail, type, primary, secondary, tertiary) in Self.aircraft {
            let object = try context.insert("Aircraft")
            object["tailNumber"] = .string(tail)
            object["aircraftType"] = .string(type)
            object["colorScheme.primary"] = .string(primary)
            object["colorScheme.secondary"] = secondary.map(Value.string) ?? .null
            object["colorScheme.tertiary"] = tertiary.map(Value.string) ?? .null
        }
        try context.save()
        try store.close()
    }

    /// A file in the fixture directory with `contents`.
    func file(_ name: String, _ contents: Data) -> String {
        let url = directory.appending(path: name)
        _ = FileManager.default.createFile(atPath: url.path, contents: contents)
        return url.path
    }

    func path(_ name: String) -> String { directory.appending(path: name).path }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    /// Runs `stratactl` with `arguments`.
    static func stratactl(_ arguments: String..., stdin: Data? = nil) throws -> BuiltBinary.Result {
        try BuiltBinary.run("stratactl", arguments, stdin: stdin)
    }

    /// Parses JSON output.
    static func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }
}
