import Foundation
import Testing
@testable import strata_fuzz

/// Every seed of `fuzz/corpus/TARGET` and every input that once crashed a target
/// (`fuzz/regressions/TARGET`) runs through its fuzz target, uninstrumented, in the normal
/// suite: none may crash or hang.
@Suite("Fuzz corpus and regressions", .serialized, .timeLimit(.minutes(5)))
struct FuzzCorpusTests {
    static let fuzzDirectory = Paths.packageRoot.appendingPathComponent("fuzz")

    static func inputs(of target: String) -> [URL] {
        ["corpus", "regressions"].flatMap { kind -> [URL] in
            let directory = fuzzDirectory.appendingPathComponent(kind).appendingPathComponent(target)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return names.sorted().map { directory.appendingPathComponent($0) }
        }
    }

    @Test("Each target replays its corpus and regressions", arguments: ["predicate", "varlink", "model", "config", "coredata"])
    func replay(target name: String) async throws {
        let inputs = Self.inputs(of: name)
        #expect(inputs.count >= 3, "the seed corpus of \(name) is missing")
        // On its own thread: the Varlink target waits for its dispatcher's tasks, which need
        // the cooperative pool.
        let made = try await offThread { () throws -> Bool in
            guard let target = FuzzTargets.make(name) else { return false }
            defer { FuzzTargets.removeScratchDirectories() }
            for input in inputs { target.run(try Data(contentsOf: input)) }
            return true
        }
        #expect(made, "cannot set up the \(name) target")
    }
}
