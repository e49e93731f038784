import Foundation
import StrataDaemon

/// The daemon's configuration reader: the input is a `stratad.yaml` (model directories are
/// not loaded; every other check runs).
final class ConfigurationFuzzTarget: FuzzTarget {
    static let name = "config"

    init() throws {}

    func run(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        _ = try? ConfigurationLoader(checksModels: false).parse(text, file: "fuzz.yaml")
    }
}
