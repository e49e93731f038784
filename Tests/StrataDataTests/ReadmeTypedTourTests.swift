import Foundation
import Testing

/// README.md's typed tour compiles: scripts/readme-swift.py writes its Swift, as written, into
/// ReadmeTypedTour.swift (compiled with this target); this test fails when that file is not
/// what README.md says now.
@Suite("README: the typed tour compiles")
struct ReadmeTypedTourTests {
    @Test func readmeTypedTourIsTheREADMEsSwift() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", TestPaths.packageRoot.appending(path: "scripts/readme-swift.py").path, "--check"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        let tour: () throws -> Void = ReadmeTypedTour.run
        _ = tour
    }
}
