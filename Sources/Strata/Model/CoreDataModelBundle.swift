import Foundation

/// The versions of a Core Data `.xcdatamodeld` bundle, each read on its own: a version that
/// cannot be read (a syntax error, an unsupported construct) is reported for that version and
/// does not keep the others from being read.
///
/// Versions are ordered by their model names with natural numeric order — Xcode's default
/// names `App`, `App 2`, …, `App 10` come out in that order — and the current version is the
/// one the bundle's `.xccurrentversion` property list names (`_XCCurrentVersionName`).
///
/// ```swift
/// let bundle = try CoreDataModelBundle(url: URL(filePath: "App.xcdatamodeld"))
/// for version in bundle.versions {
///     switch version.result {
///     case .success(let model): print(version.name, model.checksum)
///     case .failure(let error): print(version.name, "cannot be read:", error)
///     }
/// }
/// ```
public struct CoreDataModelBundle: Sendable {
    /// One `.xcdatamodel` version of the bundle.
    public struct Version: Sendable {
        /// The version name: the directory name without `.xcdatamodel` (`App 2`).
        public let name: String
        /// The `.xcdatamodel` directory.
        public let url: URL
        /// The imported, validated model, or why it cannot be read.
        public let result: Result<ObjectModel, ModelError>

        /// The model, when the version could be read.
        public var model: ObjectModel? { try? result.get() }
        /// The problem, when it could not.
        public var error: ModelError? {
            if case .failure(let error) = result { return error }
            return nil
        }
    }

    /// The bundle.
    public let url: URL
    /// Every version, in natural order of their names.
    public let versions: [Version]
    /// The name of the current version (it may be one that cannot be read).
    public let currentName: String

    /// Reads every version of the bundle at `url`.
    ///
    /// A single `.xcdatamodel` (one version, outside a bundle) is read as a bundle of that
    /// one version.
    ///
    /// - Throws: ``ModelError`` only for problems of the bundle itself: it cannot be listed,
    ///   holds no `.xcdatamodel`, or its `.xccurrentversion` is missing (with several
    ///   versions), unreadable or names no version of the bundle.
    public init(url: URL) throws(ModelError) {
        if url.pathExtension.lowercased() == "xcdatamodel" {
            // A single version (an .xcdatamodel outside a bundle): a bundle of one.
            guard FileManager.default.fileExists(atPath: url.appending(path: "contents").path) else {
                throw ModelError(.unreadableFile, "no such model version (an .xcdatamodel directory holding a contents file)", file: url.path)
            }
            let name = url.deletingPathExtension().lastPathComponent
            self.url = url
            do throws(ModelError) {
                self.versions = [Version(name: name, url: url, result: .success(try CoreDataModelImporter.importVersion(at: url)))]
            } catch {
                self.versions = [Version(name: name, url: url, result: .failure(error))]
            }
            self.currentName = name
            return
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: url.path)
        } catch {
            let exists = FileManager.default.fileExists(atPath: url.path)
            throw ModelError(.unreadableFile, exists ? "cannot list the model bundle: \(error.localizedDescription)" : "no such model bundle", file: url.path)
        }
        let directories = names.filter { $0.lowercased().hasSuffix(".xcdatamodel") }
            .map { url.appending(path: $0, directoryHint: .isDirectory) }
            .sorted { Self.naturalOrder($0.deletingPathExtension().lastPathComponent, $1.deletingPathExtension().lastPathComponent) }
        guard !directories.isEmpty else {
            throw ModelError(.invalidFile, "the bundle holds no .xcdatamodel version; point at an .xcdatamodeld bundle made by Xcode", file: url.path)
        }
        let currentFileName = try Self.currentVersionFileName(of: url, versions: directories)
        self.url = url
        self.versions = directories.map { directory in
            let name = directory.deletingPathExtension().lastPathComponent
            do throws(ModelError) {
                return Version(name: name, url: directory, result: .success(try CoreDataModelImporter.importVersion(at: directory)))
            } catch {
                return Version(name: name, url: directory, result: .failure(error))
            }
        }
        self.currentName = (currentFileName as NSString).deletingPathExtension
    }

    // MARK: - Lookup

    /// The current version.
    public var current: Version { versions.first { $0.name == currentName }! }

    /// The version named `name`.
    public func version(named name: String) -> Version? { versions.first { $0.name == name } }

    /// The versions that could be read, in order.
    public var readableModels: [ObjectModel] { versions.compactMap(\.model) }

    /// The versions that could not be read, in order, with their problems.
    public var unreadableVersions: [Version] { versions.filter { $0.error != nil } }

    // MARK: - Order

    /// Natural order of version names: `Model` before `Model 2` before `Model 10`; runs of
    /// digits compare as numbers, everything else as text.
    public static func naturalOrder(_ a: String, _ b: String) -> Bool {
        func chunks(_ s: String) -> [(text: String, number: Int?)] {
            var result: [(String, Int?)] = []
            var current = ""
            var isDigit = false
            for c in s {
                let digit = c.isASCII && c.isNumber
                if !current.isEmpty && digit != isDigit {
                    result.append((current, isDigit ? Int(current) : nil))
                    current = ""
                }
                isDigit = digit
                current.append(c)
            }
            if !current.isEmpty { result.append((current, isDigit ? Int(current) : nil)) }
            return result
        }
        let ca = chunks(a), cb = chunks(b)
        for (x, y) in zip(ca, cb) where x.text != y.text {
            if let nx = x.number, let ny = y.number, nx != ny { return nx < ny }
            return x.text < y.text
        }
        return ca.count < cb.count
    }

    // MARK: - Current version

    private static func currentVersionFileName(of url: URL, versions: [URL]) throws(ModelError) -> String {
        let fileNames = versions.map(\.lastPathComponent)
        let currentFile = url.appending(path: ".xccurrentversion")
        guard FileManager.default.fileExists(atPath: currentFile.path) else {
            if fileNames.count == 1 { return fileNames[0] }
            throw ModelError(.unreadableFile, "no .xccurrentversion file names the current version among \(fileNames.count) versions; choose one in Xcode (Model Version) or add the file", file: url.path)
        }
        let plistData = try ModelFile.readFile(currentFile)
        let plist = try? PropertyListSerialization.propertyList(from: plistData, options: [], format: nil)
        guard let dictionary = plist as? [String: Any], let currentName = dictionary["_XCCurrentVersionName"] as? String else {
            throw ModelError(.invalidFile, "expected a property list with the key _XCCurrentVersionName", file: currentFile.path)
        }
        guard fileNames.contains(currentName) else {
            throw ModelError(.unknownVersion, "the current version '\(currentName)' is not in the bundle (it has \(fileNames.joined(separator: ", ")))", file: currentFile.path)
        }
        return currentName
    }
}
