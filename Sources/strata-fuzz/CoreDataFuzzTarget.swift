import Foundation
import Strata

/// The Core Data importer: the input is the `contents` XML of an `.xcdatamodel`, imported
/// (through the public loader, from a file) and validated.
final class CoreDataFuzzTarget: FuzzTarget {
    static let name = "coredata"
    let version: URL
    let contents: URL

    init() throws {
        version = try FuzzTargets.scratchDirectory(Self.name).appending(path: "Fuzz.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        contents = version.appending(path: "contents")
    }

    func run(_ data: Data) {
        guard (try? data.write(to: contents)) != nil else { return }
        guard let model = try? ModelFile.load(contentsOf: version) else { return }
        _ = StorageLayout(model: model)
        _ = try? ModelFile.encode(model, format: .yaml)
    }
}
