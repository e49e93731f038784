import Foundation
import Synchronization
import Testing

/// The package's built executables (`stratactl`, `strata-bench`), located and run from tests.
///
/// A binary is looked up next to the running test bundle (the build directory of this
/// `swift test`), then under `.build/debug` of the package. When it is in neither place it is
/// built once with `swift build --product NAME`; when that fails, ``url(_:)`` throws, so the
/// test fails with the build output instead of passing silently.
enum BuiltBinary {
    /// The package root, from this file's path (`Tests/EndToEndTests/Support/BuiltBinary.swift`).
    static let packageRoot = URL(filePath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// What one run of an executable produced.
    struct Result: CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String
        var description: String { "exit \(status)\n--- stdout\n\(stdout)\n--- stderr\n\(stderr)" }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private static let located = Mutex<[String: URL]>([:])

    /// The executable `product`, building it if needed.
    static func url(_ product: String) throws -> URL {
        try located.withLock { cache in
            if let url = cache[product] { return url }
            let url = try find(product) ?? build(product)
            cache[product] = url
            return url
        }
    }

    private static func find(_ product: String) -> URL? {
        var directories: [URL] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            // Linux: …/debug/StrataPackageTests.xctest is the test executable itself.
            directories.append(URL(filePath: exe).deletingLastPathComponent())
        }
        directories.append(packageRoot.appending(path: ".build/debug"))
        return directories.map { $0.appending(path: product) }.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    private static func build(_ product: String) throws -> URL {
        let result = try run(URL(filePath: "/usr/bin/env"), ["swift", "build", "--product", product], in: packageRoot)
        guard result.status == 0, let url = find(product) else {
            throw Failure(description: "\(product) is not built and `swift build --product \(product)` failed in \(packageRoot.path):\n\(result)")
        }
        return url
    }

    /// Runs `product` with `arguments` and waits for it; standard input is empty unless given.
    static func run(_ product: String, _ arguments: [String], stdin: Data? = nil) throws -> Result {
        try run(try url(product), arguments, in: nil, stdin: stdin)
    }

    private static func run(_ executable: URL, _ arguments: [String], in directory: URL?, stdin: Data? = nil) throws -> Result {
        // Files rather than pipes: no deadlock when a child writes more than a pipe holds.
        let scratch = FileManager.default.temporaryDirectory.appending(path: "builtbinary-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appending(path: "stdout"), err = scratch.appending(path: "stderr"), input = scratch.appending(path: "stdin")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        _ = FileManager.default.createFile(atPath: input.path, contents: stdin ?? Data())
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = try FileHandle(forReadingFrom: input)
        try process.run()
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      stdout: String(decoding: try Data(contentsOf: out), as: UTF8.self),
                      stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self))
    }
}
