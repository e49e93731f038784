import Foundation
import Testing
@testable import Strata

@Suite("Model files: encode → decode round trips")
struct ModelFileRoundTripTests {
    @Test("The everything model is valid")
    func everythingIsValid() {
        #expect(ModelFileFixtures.everything.validationErrors() == [])
    }

    @Test("encode → decode gives an equal model", arguments: ModelFileFormat.allCases)
    func roundTrip(format: ModelFileFormat) throws {
        let model = ModelFileFixtures.everything
        let data = try ModelFile.encode(model, format: format)
        let decoded = try ModelFile.decode(data, format: format, file: "everything.\(format.rawValue)")
        #expect(decoded == model)
        #expect(decoded.checksum == model.checksum)
    }

    @Test("encoding is deterministic and a fixed point", arguments: ModelFileFormat.allCases)
    func deterministic(format: ModelFileFormat) throws {
        let model = ModelFileFixtures.everything
        let first = try ModelFile.encode(model, format: format)
        let second = try ModelFile.encode(model, format: format)
        #expect(first == second)
        let again = try ModelFile.encode(try ModelFile.decode(first, format: format), format: format)
        #expect(again == first)
    }

    @Test("JSON output has sorted keys")
    func jsonSortedKeys() throws {
        let text = String(decoding: try ModelFile.encode(ModelFileFixtures.everything, format: .json), as: UTF8.self)
        let nextVersion = try #require(text.range(of: "\"nextVersion\""))
        let entities = try #require(text.range(of: "\"entities\""))
        let version = try #require(text.range(of: "\"version\": \"Everything 1\""))
        #expect(entities.lowerBound < nextVersion.lowerBound)
        #expect(nextVersion.lowerBound < version.lowerBound)
    }

    @Test("YAML → JSON → YAML keeps the model", arguments: ModelFileFormat.allCases)
    func crossFormat(format: ModelFileFormat) throws {
        let other: ModelFileFormat = format == .json ? .yaml : .json
        let model = ModelFileFixtures.everything
        let viaOther = try ModelFile.decode(try ModelFile.encode(model, format: other), format: other)
        let back = try ModelFile.decode(try ModelFile.encode(viaOther, format: format), format: format)
        #expect(back == model)
    }
}
