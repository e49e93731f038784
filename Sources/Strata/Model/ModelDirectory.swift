import Foundation

/// The versions of one object model, in migration order, with the current one: a directory
/// of model files and a manifest, or a Core Data `.xcdatamodeld` bundle.
///
/// A model directory holds one model file per version (JSON or YAML, mixed freely) and a
/// manifest, `versions.yaml` (or `versions.yml` / `versions.json`):
///
/// ```yaml
/// current: Aircraft 3          # optional; the last version when left out
/// versions:                    # in migration order
///   - version: Aircraft 1      # optional; checked against the file's `version`
///     file: Aircraft 1.yaml
///   - Aircraft 2.yaml          # shorthand: just the file name
///   - {version: Aircraft 3, file: Aircraft 3.json}
/// ```
///
/// Loading checks that the manifest exists, that every file it names exists and decodes to a
/// valid model, that version names are unique and match the manifest, that `current` and
/// every `nextVersion` name a version of the directory. Two versions may have the same
/// checksum (a version that only changes delete rules, defaults or user info stores data
/// exactly like its predecessor); ``version(checksum:)`` then answers the latest of them.
///
/// ```swift
/// let models = try ModelDirectory(url: URL(filePath: "config/models/Aircraft"))
/// let storeModel = models.version(checksum: metadata.checksum)
/// ```
public struct ModelDirectory: Sendable {
    /// Where the versions were loaded from (the directory or the `.xcdatamodeld` bundle).
    public let url: URL?
    /// Every version, in migration order.
    public let versions: [ObjectModel]
    /// The version new stores are created with and existing ones are migrated to.
    public let current: ObjectModel
    /// The file each version was loaded from, by version name.
    public let files: [String: URL]
    /// Versions of a Core Data bundle that could not be read, with their problems and their
    /// place in the bundle's order; they are not in ``versions``. Always empty for a model
    /// directory with a manifest (any problem there is an error).
    public let unreadableVersions: [UnreadableVersion]

    /// A version of a Core Data bundle that could not be read.
    public struct UnreadableVersion: Sendable {
        /// The version name.
        public let name: String
        /// Its position in the bundle's full order (readable versions included), from 0.
        public let position: Int
        /// Why it cannot be read.
        public let error: ModelError
    }

    /// Manifest file names, in the order they are looked for.
    public static let manifestNames = ["versions.yaml", "versions.yml", "versions.json"]

    /// Loads a model directory (with a manifest) or a Core Data `.xcdatamodeld` bundle.
    public init(url: URL) throws(ModelError) {
        if url.pathExtension.lowercased() == "xcdatamodeld" {
            try self.init(coreDataBundle: url)
            return
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ModelError(.unreadableFile, "no such model directory", file: url.path)
        }
        guard let manifestURL = Self.manifestNames.lazy.map({ url.appending(path: $0) })
            .first(where: { FileManager.default.fileExists(atPath: $0.path) })
        else {
            throw ModelError(.unreadableFile, "the model directory has no manifest; add versions.yaml listing the version files in order (see docs/ModelFiles.md)", file: url.path)
        }
        let manifest = try ModelDirectoryManifest.load(manifestURL)
        var versions: [ObjectModel] = []
        var files: [String: URL] = [:]
        for entry in manifest.entries {
            let fileURL = url.appending(path: entry.file)
            guard FileManager.default.fileExists(atPath: fileURL.path) else {
                throw ModelError(.unreadableFile, "line \(entry.line ?? 0): the manifest lists '\(entry.file)', which does not exist in \(url.path)", file: manifestURL.path, version: entry.version)
            }
            let model = try ModelFile.load(contentsOf: fileURL)
            if let expected = entry.version, expected != model.version {
                throw ModelError(.invalidFile, "the manifest names '\(entry.file)' version '\(expected)', but the file declares version '\(model.version)'; make them agree", file: manifestURL.path, version: expected)
            }
            versions.append(model)
            if let previous = files[model.version] {
                throw ModelError(.duplicateName, "version '\(model.version)' is declared by both '\(previous.lastPathComponent)' and '\(entry.file)'; give each version its own name", file: manifestURL.path, version: model.version)
            }
            files[model.version] = fileURL
        }
        try self.init(url: url, versions: versions, currentName: manifest.current, files: files, source: manifestURL.path, unreadable: [])
    }

    /// A directory built in code (or from another source): the versions in migration order and
    /// the current one's name (default: the last version).
    public init(versions: [ObjectModel], current: String? = nil) throws(ModelError) {
        try self.init(url: nil, versions: versions, currentName: current, files: [:], source: nil, unreadable: [])
    }

    private init(url: URL?, versions: [ObjectModel], currentName: String?, files: [String: URL], source: String?,
                 unreadable: [UnreadableVersion]) throws(ModelError) {
        guard let last = versions.last else {
            throw ModelError(.emptyModel, "the model directory lists no versions; list at least one", file: source)
        }
        var names: Set<String> = []
        for model in versions where !names.insert(model.version).inserted {
            throw ModelError(.duplicateName, "version '\(model.version)' appears twice; give each version its own name", file: source, version: model.version)
        }
        for model in versions {
            if let next = model.nextVersion, !names.contains(next) {
                throw ModelError(.unknownVersion, "nextVersion '\(next)' is not a version of this directory (\(versions.map(\.version).joined(separator: ", ")))", file: files[model.version]?.path ?? source, version: model.version)
            }
        }
        let current: ObjectModel
        if let currentName {
            guard let found = versions.first(where: { $0.version == currentName }) else {
                throw ModelError(.unknownVersion, "the current version '\(currentName)' is not listed; use one of \(versions.map(\.version).joined(separator: ", "))", file: source)
            }
            current = found
        } else {
            current = last
        }
        self.url = url
        self.versions = versions
        self.current = current
        self.files = files
        self.unreadableVersions = unreadable
    }

    /// The versions of a Core Data `.xcdatamodeld` bundle, in natural order of their names
    /// (`Model`, `Model 2`, …, `Model 10`); the current one is the one `.xccurrentversion`
    /// names. Core Data has no `nextVersion`: imported versions have none.
    ///
    /// A version that cannot be read is left out of ``versions`` and listed in
    /// ``unreadableVersions``; the others are still usable. It is an error when the current
    /// version cannot be read (stores are created and migrated to it).
    public init(coreDataBundle url: URL) throws(ModelError) {
        try self.init(coreDataBundle: CoreDataModelBundle(url: url))
    }

    /// The readable versions of a Core Data bundle already read (see ``init(coreDataBundle:)-(URL)``).
    public init(coreDataBundle bundle: CoreDataModelBundle) throws(ModelError) {
        var versions: [ObjectModel] = []
        var files: [String: URL] = [:]
        var unreadable: [UnreadableVersion] = []
        for (position, version) in bundle.versions.enumerated() {
            switch version.result {
            case .success(let model):
                versions.append(model)
                files[model.version] = version.url
            case .failure(let error):
                unreadable.append(UnreadableVersion(name: version.name, position: position, error: error))
            }
        }
        if let broken = unreadable.first(where: { $0.name == bundle.currentName }) {
            var error = broken.error
            let others = unreadable.count > 1 ? " (\(unreadable.count - 1) other version(s) cannot be read either: \(unreadable.filter { $0.name != broken.name }.map(\.name).joined(separator: ", ")))" : ""
            error.reason = "the current version '\(bundle.currentName)' cannot be read\(others): " + error.reason
            throw error
        }
        try self.init(url: bundle.url, versions: versions, currentName: bundle.currentName, files: files,
                      source: bundle.url.path, unreadable: unreadable)
    }

    /// The unreadable versions strictly between two readable versions of the bundle's order
    /// (a migration from one to the other would skip them).
    public func unreadableVersions(between from: String, and to: String) -> [UnreadableVersion] {
        guard !unreadableVersions.isEmpty, let a = fullPosition(of: from), let b = fullPosition(of: to) else { return [] }
        let range = min(a, b)...max(a, b)
        return unreadableVersions.filter { range.contains($0.position) }
    }

    /// The position of a readable version in the bundle's full order (unreadable ones counted).
    private func fullPosition(of name: String) -> Int? {
        guard let index = index(ofVersion: name) else { return nil }
        var position = index
        for broken in unreadableVersions.sorted(by: { $0.position < $1.position }) where broken.position <= position { position += 1 }
        return position
    }

    // MARK: - Lookup

    /// The version named `name`.
    public func version(named name: String) -> ObjectModel? { versions.first { $0.version == name } }

    /// The latest version whose ``ObjectModel/checksum`` is `checksum`: the model a store
    /// with that checksum in its metadata was written with (or one that stores data exactly
    /// like it).
    public func version(checksum: String) -> ObjectModel? { versions.last { $0.checksum == checksum } }

    /// Every version with `checksum`, in order (more than one when versions differ only in
    /// what the checksum does not cover).
    public func versions(checksum: String) -> [ObjectModel] { versions.filter { $0.checksum == checksum } }

    /// The position of a version in migration order.
    public func index(ofVersion name: String) -> Int? { versions.firstIndex { $0.version == name } }
}
