import ArgumentParser
import Foundation
import Strata
import StrataUnits

/// `strata-bench limits`: how compiling a long to-one keypath and loading a large model scale
/// with their size. Both were super-linear (a 1,500-hop keypath took seconds, a 400-entity
/// model 20 s); linear work shows a constant time per hop / per entity.
struct LimitsBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "limits",
        abstract: "Time predicate compilation against keypath length and model loading against entity count.",
        discussion: """
            keypath   compiles "next.next.….value == 1" (a to-one chain of N hops) with the \
            predicate limits lifted, for N = --sizes; prints the median of --repeat runs and \
            microseconds per hop.
            model     decodes, validates and lays out a YAML model of N entities (each with two \
            attributes, a to-one and a to-many relationship and an index); milliseconds per \
            entity.

            Linear scaling shows as a constant per-hop / per-entity time across sizes.
            """
    )

    @Option(name: .long, parsing: .upToNextOption, help: "Sizes to measure.")
    var sizes: [Int] = [100, 200, 400, 800, 1600]

    @Option(name: .long, help: "Runs per size (the median is reported).")
    var `repeat` = 5

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    @Option(name: .long, help: "What to measure: keypath, model or both.")
    var measure = "both"


    func validate() throws {
        guard !sizes.isEmpty, sizes.allSatisfy({ (1...100_000).contains($0) }), (1...100).contains(`repeat`) else {
            throw ValidationError("--sizes must be between 1 and 100000, --repeat between 1 and 100")
        }
        guard ["keypath", "model", "both"].contains(measure) else { throw ValidationError("--measure must be keypath, model or both") }
    }

    func run() throws {
        var rows: [[String: Any]] = []
        for size in sizes {
            let keyPath = measure == "model" ? 0 : try median { try compileChain(hops: size) }
            let model = measure == "keypath" ? 0 : try median { try loadModel(entities: size) }
            rows.append(["size": size, "keypathSeconds": keyPath, "keypathMicrosecondsPerHop": keyPath / Double(size) * 1e6,
                         "modelSeconds": model, "modelMillisecondsPerEntity": model / Double(size) * 1e3])
        }
        if json {
            print(String(decoding: try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys]), as: UTF8.self))
            return
        }
        print("size   keypath compile        model load")
        for row in rows {
            print(String(format: "%5d  %8.4f s %7.2f µs/hop  %8.4f s %7.3f ms/entity", row["size"] as! Int, row["keypathSeconds"] as! Double,
                         row["keypathMicrosecondsPerHop"] as! Double, row["modelSeconds"] as! Double, row["modelMillisecondsPerEntity"] as! Double))
        }
    }

    private func median(_ body: () throws -> Void) throws -> Double {
        var times: [Double] = []
        for _ in 0..<`repeat` {
            let start = ContinuousClock.now
            try body()
            let elapsed = ContinuousClock.now - start
            times.append(elapsed.seconds)
        }
        return times.sorted()[times.count / 2]
    }

    static let chainModel = ObjectModel(version: "Chain 1", entities: [
        Entity("Node", attributes: [Attribute("value", .int64)], relationships: [Relationship("next", destination: "Node")]),
    ])

    private func compileChain(hops: Int) throws {
        let unlimited = PredicateLimits(maxFormatLength: .max, maxNestingDepth: .max / 4, maxKeyPathComponents: .max,
                                        maxJoinedTables: .max, maxSortDescriptors: .max, maxBoundValues: .max)
        let keyPath = Array(repeating: "next", count: hops).joined(separator: ".") + ".value"
        let predicate = try FetchPredicate(format: "\(keyPath) == 1", arguments: [], limits: unlimited)
        _ = try FetchQuery.select(FetchRequest(entityName: "Node", predicate: predicate), layout: StorageLayout(model: Self.chainModel),
                                  limits: unlimited)
    }

    private func loadModel(entities count: Int) throws {
        var lines = ["version: Big 1", "entities:"]
        for i in 0..<count {
            lines += [
                "  - name: E\(i)",
                "    attributes: [{name: a, type: string}, {name: b, type: int64}]",
                "    relationships:",
                "      - {name: next, destination: E\((i + 1) % count), inverse: previous}",
                "      - {name: previous, destination: E\((i + count - 1) % count), inverse: next, toMany: true}",
                "    indexes: [{name: byA, elements: [a]}]",
            ]
        }
        let model = try ModelFile.decode(Data(lines.joined(separator: "\n").utf8), format: .yaml)
        _ = StorageLayout(model: model)
        _ = model.checksum
    }
}
