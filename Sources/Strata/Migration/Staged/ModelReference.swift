import Foundation

/// A model version named by a custom migration stage, with the checksum it must have
/// (Core Data's `NSManagedObjectModelReference`).
///
/// The checksum pins the version: if the file is edited after the stage was written, the
/// stage refuses to run instead of migrating to a layout its handlers were not written for.
///
/// ```swift
/// let v2 = ModelReference(version: "Post 2", in: URL(filePath: "config/models/Post"),
///                         checksum: "hC2k…=")
/// let v3 = ModelReference(file: URL(filePath: "config/models/Post/Post 3.json"), checksum: "x9Q…=")
/// let v4 = ModelReference(model: postV4)      // a model value; checksum optional
/// ```
public struct ModelReference: Sendable, Hashable, CustomStringConvertible {
    /// Where the model comes from.
    public enum Source: Sendable, Hashable {
        /// A model file (JSON, YAML).
        case file(URL)
        /// A version, by name, of a model directory (or `.xcdatamodeld` bundle).
        case directory(URL, version: String)
        /// A model built in code or already loaded.
        case model(ObjectModel)
    }

    /// Where the model comes from.
    public var source: Source
    /// The checksum the model must have; nil accepts any (not recommended for files).
    public var expectedChecksum: String?

    /// A model file, optionally pinned to a checksum.
    public init(file: URL, checksum: String? = nil) {
        self.source = .file(file)
        self.expectedChecksum = checksum
    }

    /// A version of a model directory, optionally pinned to a checksum.
    public init(version: String, in directory: URL, checksum: String? = nil) {
        self.source = .directory(directory, version: version)
        self.expectedChecksum = checksum
    }

    /// A model in memory, optionally pinned to a checksum.
    public init(model: ObjectModel, checksum: String? = nil) {
        self.source = .model(model)
        self.expectedChecksum = checksum
    }

    /// The file, version or model, and the checksum when pinned.
    public var description: String {
        switch source {
        case .file(let url): return "file '\(url.path)'"
        case .directory(let url, let version): return "version '\(version)' of '\(url.path)'"
        case .model(let model): return "model '\(model.version)'"
        }
    }

    /// Loads the model and checks its checksum.
    ///
    /// - Throws: ``StagedMigrationError`` (`unresolvableReference`, or `checksumMismatch`
    ///   naming both checksums).
    public func resolve() throws(StagedMigrationError) -> ObjectModel {
        let model: ObjectModel
        do {
            switch source {
            case .file(let url):
                model = try ModelFile.load(contentsOf: url)
            case .directory(let url, let version):
                let directory = try ModelDirectory(url: url)
                guard let found = directory.version(named: version) else {
                    throw StagedMigrationError(.unresolvableReference, "model reference \(self): the directory has no version '\(version)' (versions: \(directory.versions.map(\.version).joined(separator: ", "))); fix the version name")
                }
                model = found
            case .model(let value):
                model = value
            }
        } catch let error as StagedMigrationError {
            throw error
        } catch {
            throw StagedMigrationError(.unresolvableReference, "model reference \(self) cannot be loaded: \(error)", underlying: "\(error)")
        }
        if let expectedChecksum, expectedChecksum != model.checksum {
            throw StagedMigrationError(.checksumMismatch, "model reference \(self) ('\(model.version)') has checksum \(model.checksum), but the stage expects \(expectedChecksum); the model changed since the stage was written — restore it, or update the stage's checksum if the change is intended")
        }
        return model
    }
}
