import Foundation

/// Where the tests find the package's files and their fixtures.
enum TestPaths {
    /// The package's root (three levels above this file).
    static let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    /// Tests/StrataDataTests/Fixtures (the bundle's copy).
    static let fixtures = Bundle.module.resourceURL!.appending(path: "Fixtures")

    /// Where SwiftPM put the package's executables (stratactl), beside the test bundle.
    static let productsDirectory = Bundle.module.bundleURL.deletingLastPathComponent()

    /// A new temporary directory, for stores.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appending(path: "strata-data-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
