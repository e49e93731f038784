import Foundation
import Strata

/// Model files: the input is decoded as JSON and as YAML; a model that decodes is
/// validated, laid out, checksummed, encoded in both formats and decoded again.
final class ModelFileFuzzTarget: FuzzTarget {
    static let name = "model"

    init() throws {}

    func run(_ data: Data) {
        for format in ModelFileFormat.allCases {
            guard let model = try? ModelFile.decodeUnvalidated(data, format: format) else { continue }
            _ = model.validationErrors()
            guard (try? model.validated()) != nil else { continue }
            _ = StorageLayout(model: model)
            _ = model.checksum
            for output in ModelFileFormat.allCases {
                if let encoded = try? ModelFile.encode(model, format: output) {
                    _ = try? ModelFile.decode(encoded, format: output)
                }
            }
        }
    }
}
