import Foundation
import Testing

@Suite("strata-bench", .timeLimit(.minutes(10)))
struct CLIBenchTests {
    @Test func crudPrintsJSONWithRatios() throws {
        let result = try BuiltBinary.run("strata-bench", ["crud", "--rows", "2000", "--fetches", "50", "--warmup", "5", "--json"])
        #expect(result.status == 0, "\(result)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result)")
        #expect(json["scenario"] as? String == "crud")
        #expect(json["rows"] as? Int == 2000)
        for key in ["insert_ratio", "fetch_ratio", "update_ratio", "delete_ratio", "insert_strata", "insert_raw", "fetch_p99_strata"] {
            let value = try #require(json[key] as? Double, "\(key) missing in \(result.stdout)")
            #expect(value > 0, "\(key)")
        }
    }

    /// `crud --typed`: StrataData's typed layer against GRDB's Codable records, the same work
    /// on both sides (the fetch checksums and row counts are compared by the scenario itself).
    @Test func crudTypedPrintsJSONWithRatios() throws {
        let result = try BuiltBinary.run("strata-bench", ["crud", "--typed", "--rows", "2000", "--fetches", "50", "--warmup", "5", "--json"])
        #expect(result.status == 0, "\(result)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result)")
        #expect(json["scenario"] as? String == "crud-typed")
        for key in ["insert_ratio", "fetch_ratio", "fetch_all_ratio", "update_ratio", "delete_ratio"] {
            let value = try #require(json[key] as? Double, "\(key) missing in \(result.stdout)")
            #expect(value > 0, "\(key)")
        }
    }
}
