import Foundation
import Testing

/// `stratactl plan --from "Aircraft 1" --model DIR`: `--from`, like `--to`, takes a version
/// name of the model directory; a name without `--model` says how to give one.
@Suite("stratactl plan: version names with --model")
struct PlanVersionNameTests {
    static let models = ModelFileFixtures.packageRoot.appending(path: "config/models/Aircraft").path

    @Test func fromAVersionName() throws {
        let byName = try StratactlProcess.run(["plan", "--from", "Aircraft 1", "--model", Self.models, "--to", "Aircraft 2"])
        #expect(byName.status == 0, "\(byName.stderr)")
        #expect(byName.stdout.contains("Plan: Aircraft 1 -> Aircraft 2"), "\(byName.stdout)")
        // The same plan as from the version's file.
        let byFile = try StratactlProcess.run(["plan", "--from", Self.models + "/Aircraft 1.yaml", "--model", Self.models, "--to", "Aircraft 2"])
        #expect(byFile.stdout == byName.stdout)
        // Default destination: the directory's current version.
        let toCurrent = try StratactlProcess.run(["plan", "--from", "Aircraft 1", "--model", Self.models])
        #expect(toCurrent.status == 0 && toCurrent.stdout.contains("Plan: Aircraft 1 -> Aircraft 3"), "\(toCurrent.stdout)\(toCurrent.stderr)")
    }

    @Test func unknownNamesSayWhatToDo() throws {
        let unknown = try StratactlProcess.run(["plan", "--from", "Aircraft 9", "--model", Self.models, "--to", "Aircraft 2"])
        #expect(unknown.status == 2, "\(unknown.stderr)")
        #expect(unknown.stderr.contains("has no version 'Aircraft 9' (versions: Aircraft 1, Aircraft 2, Aircraft 3)"), "\(unknown.stderr)")
        let noModel = try StratactlProcess.run(["plan", "--from", "Aircraft 1", "--to", Self.models + "/Aircraft 2.yaml"])
        #expect(noModel.status == 2, "\(noModel.stderr)")
        #expect(noModel.stderr.contains("no model file 'Aircraft 1'; to name a version, give its model directory too"), "\(noModel.stderr)")
    }
}
