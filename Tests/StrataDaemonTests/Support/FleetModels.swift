import Foundation
import Strata

/// The model directories of the roll-out tests (docs/Rollout.md's example).
///
/// - `Fleet 1`: Aircraft (registration, seats, photo, maker), Hangar (code), Pilot (name).
/// - `Fleet 2`: registration renamed tailNumber, photo and Hangar removed, colour added
///   (default white), an index on Pilot.name (a build that destroys nothing: never held).
///   The store is moved here during the tests.
/// - `Fleet 3`: range added; never deployed (a client built against it is "newer").
///
/// Two small directories for refusals: `Typed` (`Typed 1` → `Typed 2` widens Item.count) and
/// `Staged` (`Staged 1` → `Staged 2` through a custom stage of `stages.yaml`).
enum FleetModels {
    static let fleet1 = """
        version: Fleet 1
        entities:
          - name: Aircraft
            attributes:
              - {name: registration, type: string, optional: false}
              - {name: seats, type: int32}
              - {name: photo, type: string}
              - {name: maker, type: string}
          - name: Hangar
            attributes:
              - {name: code, type: string}
          - name: Pilot
            attributes:
              - {name: name, type: string}
        """
    static let fleet2 = """
        version: Fleet 2
        entities:
          - name: Aircraft
            attributes:
              - {name: tailNumber, type: string, optional: false, renamingIdentifier: registration}
              - {name: seats, type: int32}
              - {name: colour, type: string, optional: false, default: white}
              - {name: maker, type: string}
          - name: Pilot
            attributes:
              - {name: name, type: string}
            indexes:
              - {name: byName, elements: [name]}
        """
    static let fleet3 = """
        version: Fleet 3
        entities:
          - name: Aircraft
            attributes:
              - {name: tailNumber, type: string, optional: false}
              - {name: seats, type: int32}
              - {name: colour, type: string, optional: false, default: white}
              - {name: maker, type: string}
              - {name: range, type: int32}
          - name: Pilot
            attributes:
              - {name: name, type: string}
            indexes:
              - {name: byName, elements: [name]}
        """

    /// Writes `models/Fleet` (current: Fleet 3); returns its path.
    static func writeFleet(in directory: String) throws -> String {
        try write(in: directory + "/models/Fleet", files: ["Fleet 1": fleet1, "Fleet 2": fleet2, "Fleet 3": fleet3])
    }

    /// Writes `models/Typed` (Item.count int16 → int64); returns its path.
    static func writeTyped(in directory: String) throws -> String {
        try write(in: directory + "/models/Typed", files: [
            "Typed 1": "version: Typed 1\nentities:\n  - name: Item\n    attributes:\n      - {name: count, type: int16}\n",
            "Typed 2": "version: Typed 2\nentities:\n  - name: Item\n    attributes:\n      - {name: count, type: int64}\n",
        ])
    }

    /// Writes `models/Staged` and its `stages.yaml` (a custom stage fills Item.label from
    /// name); returns the directory's and the stage file's paths.
    static func writeStaged(in directory: String) throws -> (models: String, stages: String) {
        let models = try write(in: directory + "/models/Staged", files: [
            "Staged 1": "version: Staged 1\nentities:\n  - name: Item\n    attributes:\n      - {name: name, type: string}\n",
            "Staged 2": "version: Staged 2\nentities:\n  - name: Item\n    attributes:\n      - {name: name, type: string}\n      - {name: label, type: string}\n",
        ])
        let stages = models + "/stages.yaml"
        try """
            stages:
              - label: label items
                from: Staged 1
                to: Staged 2
                didMigrate: |
                  UPDATE "Item" SET "label" = upper("name");

            """.write(toFile: stages, atomically: true, encoding: .utf8)
        return (models, stages)
    }

    private static func write(in models: String, files: KeyValuePairs<String, String>) throws -> String {
        try FileManager.default.createDirectory(atPath: models, withIntermediateDirectories: true)
        var manifest = "versions:\n"
        for (name, text) in files {
            try text.write(toFile: "\(models)/\(name).yaml", atomically: true, encoding: .utf8)
            manifest += "  - \(name).yaml\n"
        }
        try manifest.write(toFile: models + "/versions.yaml", atomically: true, encoding: .utf8)
        return models
    }

    /// A store at `version` of `models` with `rows` objects made by `row(i)` in `entity`.
    static func seed(at path: String, models: String, version: String, entity: String, rows: Int,
                     _ row: (Int) -> [String: any ValueConvertible]) throws {
        let directory = try ModelDirectory(url: URL(fileURLWithPath: models))
        let store = try PersistentStore.open(at: URL(fileURLWithPath: path), model: directory.version(named: version)!)
        let context = ObjectContext(store: store)
        for i in 0..<rows { _ = try context.insert(entity, values: row(i)) }
        try context.save()
        try store.close()
    }

    /// The Fleet store: `rows` aircraft and one hangar at Fleet 1.
    static func seedFleet(at path: String, models: String, rows: Int = 20) throws {
        try seed(at: path, models: models, version: "Fleet 1", entity: "Aircraft", rows: rows) { i in
            ["registration": "SEED-\(i)", "seats": 100 + i, "photo": "seed-\(i).jpg", "maker": "Airbus"]
        }
        try seed(at: path, models: models, version: "Fleet 1", entity: "Hangar", rows: 1) { _ in ["code": "H1"] }
    }
}
