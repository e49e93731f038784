import Foundation
import Testing

/// README.md's Swift examples compile: scripts/readme-swift.py writes them, as written, into
/// ReadmeTour.swift (compiled with this target), and this test fails when that file is not
/// what README.md says now — an edit to the README's Swift is compiled before it lands.
@Suite("README: the Swift examples compile")
struct ReadmeTourTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func readmeTourIsTheREADMEsSwift() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.packageRoot.appendingPathComponent("scripts/readme-swift.py").path, "--check"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        // The tour is compiled in this target: referring to it keeps it so.
        let tour: () async throws -> Void = ReadmeTour.run
        _ = tour
    }
}
