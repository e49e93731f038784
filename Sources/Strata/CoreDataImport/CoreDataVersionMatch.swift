import Foundation

/// Which version of a model bundle a Core Data store was written with.
///
/// Core Data's entity version hashes cannot be recomputed outside Core Data, so the store's
/// tables and columns are compared with the layout Core Data gives each version of the
/// bundle: exactly one version with that layout wins. When several versions have it (they
/// differ only in what is not stored: defaults, delete rules, user info), the store's
/// `NSStoreModelVersionIdentifiers` choose among them if they name exactly one; otherwise the
/// version must be given (`--from`).
public struct CoreDataVersionMatch: Sendable {
    /// A version of the bundle and how it compares with the store.
    public struct Candidate: Sendable, Hashable {
        /// The bundle's version that matched.
        public var version: String
        /// What keeps the store from having this version's layout; empty when it has it.
        public var differences: [String]
        /// Why the version could not be read, when it could not.
        public var unreadable: String?
    }

    /// How the version was chosen.
    public enum Method: String, Sendable {
        /// The only version with the store's layout.
        case layout
        /// Several versions have the layout; the store's version identifiers named one.
        case versionIdentifier
        /// Given by the caller (`--from`).
        case given
    }

    /// The store's version.
    public var version: ObjectModel
    /// How it matched.
    public var method: Method
    /// Every version of the bundle, compared with the store.
    public var candidates: [Candidate]
}

extension CoreDataVersionMatch {
    /// Matches the store copied in `copy` against `bundle`'s versions, or checks `given`.
    static func match(_ copy: CoreDataStoreCopy, bundle: CoreDataModelBundle, given: String?) throws(CoreDataImportError) -> (CoreDataVersionMatch, CoreDataStoreMapping) {
        let path = copy.source.path
        var candidates: [Candidate] = []
        var mappings: [String: CoreDataStoreMapping] = [:]
        for version in bundle.versions {
            switch version.result {
            case .success(let model):
                let mapping = CoreDataStoreMapping(model: model, store: copy)
                mappings[model.version] = mapping
                candidates.append(Candidate(version: model.version, differences: mapping.differences))
            case .failure(let error):
                candidates.append(Candidate(version: version.name, differences: [], unreadable: "\(error)"))
            }
        }
        if let given {
            guard let version = bundle.version(named: given) else {
                throw CoreDataImportError(.unknownVersion, "--from names '\(given)', which is not a version of \(bundle.url.path) (versions: \(bundle.versions.map(\.name).joined(separator: ", ")))", store: path, version: given)
            }
            if let error = version.error {
                throw CoreDataImportError(.unreadableModel, "version '\(given)' of the model bundle cannot be read: \(error); fix the model version", store: path, version: given)
            }
            let mapping = mappings[given]!
            guard mapping.differences.isEmpty else {
                throw CoreDataImportError(.layoutMismatch, "the store does not have the layout of version '\(given)' (given with --from), so its data cannot be read with it; name the store's version, or leave --from out to find it",
                                          store: path, version: given, candidates: candidates.filter { $0.version == given })
            }
            return (CoreDataVersionMatch(version: mapping.model, method: .given, candidates: candidates), mapping)
        }
        let exact = candidates.filter { $0.unreadable == nil && $0.differences.isEmpty }
        if exact.count == 1 {
            let mapping = mappings[exact[0].version]!
            return (CoreDataVersionMatch(version: mapping.model, method: .layout, candidates: candidates), mapping)
        }
        if exact.count > 1 {
            let identifiers = Set(copy.metadata.versionIdentifiers)
            let named = exact.filter { c in mappings[c.version]!.model.versionIdentifier.map(identifiers.contains) == true }
            if named.count == 1 {
                let mapping = mappings[named[0].version]!
                return (CoreDataVersionMatch(version: mapping.model, method: .versionIdentifier, candidates: candidates), mapping)
            }
            let ids = identifiers.isEmpty ? "the store records no version identifier" : "the store's version identifiers (\(identifiers.sorted().joined(separator: ", "))) do not single one out"
            throw CoreDataImportError(.ambiguousVersion, "\(exact.count) versions of the bundle have the store's layout (\(exact.map { "'\($0.version)'" }.joined(separator: ", "))) and \(ids); name the store's version with --from",
                                      store: path, candidates: exact)
        }
        let unreadable = candidates.filter { $0.unreadable != nil }
        let hint = unreadable.isEmpty ? "" : " \(unreadable.count) version(s) cannot be read and may be the store's: fix them and try again."
        throw CoreDataImportError(.unknownVersion, "no version of \(bundle.url.lastPathComponent) has the store's layout (its tables and columns), so the store was written with a version the bundle does not have; add that version to the bundle.\(hint) What differs from each version:",
                                  store: path, candidates: candidates)
    }
}
