import Foundation

/// Which version of a model bundle a Core Data store was written with.
///
/// Core Data's entity version hashes cannot be recomputed outside Core Data, so the store's
/// tables and columns are compared with the layout Core Data gives each version of the
/// bundle: exactly one version with that layout wins. Entities renamed by renaming identifier
/// may still be listed under an old name in `Z_PRIMARYKEY` (Core Data keeps the old `Z_NAME`);
/// the bundle's renaming identifiers map them to the version's names. When several versions
/// have the layout (they differ only in what is not stored: defaults, delete rules, user
/// info, or a rename), the store's own metadata chooses: its
/// `NSStoreModelVersionIdentifiers` if they name exactly one, else the entity names of its
/// `NSStoreModelVersionHashes` if exactly one version has those entities; otherwise the
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
        /// Several versions have the layout; only one has the entities named in the store's
        /// `NSStoreModelVersionHashes`.
        case entityHashes
        /// Given by the caller (`--from`).
        case given
    }

    /// The store's version.
    public var version: ObjectModel
    /// How it matched.
    public var method: Method
    /// Every version of the bundle, compared with the store.
    public var candidates: [Candidate]
    /// Entities the store's `Z_PRIMARYKEY` lists under an earlier name, renamed since by
    /// renaming identifier: the version's name → the name in the store.
    public var staleEntityNames: [String: String] = [:]
}

extension CoreDataVersionMatch {
    /// For each entity name of the bundle, the names it had in earlier versions (followed
    /// through renaming identifiers, version by version).
    static func earlierNames(in bundle: CoreDataModelBundle) -> [String: [String]] {
        var earlier: [String: [String]] = [:]
        for model in bundle.readableModels {
            for entity in model.entities {
                guard let old = entity.renamingIdentifier, old != entity.name else { continue }
                var names = earlier[entity.name] ?? []
                for name in [old] + (earlier[old] ?? []) where !names.contains(name) { names.append(name) }
                earlier[entity.name] = names
            }
        }
        return earlier
    }

    /// Matches the store copied in `copy` against `bundle`'s versions, or checks `given`.
    static func match(_ copy: CoreDataStoreCopy, bundle: CoreDataModelBundle, given: String?) throws(CoreDataImportError) -> (CoreDataVersionMatch, CoreDataStoreMapping) {
        let path = copy.source.path
        let earlier = earlierNames(in: bundle)
        var candidates: [Candidate] = []
        var mappings: [String: CoreDataStoreMapping] = [:]
        for version in bundle.versions {
            switch version.result {
            case .success(let model):
                let mapping = CoreDataStoreMapping(model: model, store: copy, earlierNames: earlier)
                mappings[model.version] = mapping
                candidates.append(Candidate(version: model.version, differences: mapping.differences))
            case .failure(let error):
                candidates.append(Candidate(version: version.name, differences: [], unreadable: "\(error)"))
            }
        }
        func found(_ name: String, _ method: Method) -> (CoreDataVersionMatch, CoreDataStoreMapping) {
            let mapping = mappings[name]!
            return (CoreDataVersionMatch(version: mapping.model, method: method, candidates: candidates, staleEntityNames: mapping.staleNames), mapping)
        }
        if let given {
            guard let version = bundle.version(named: given) else {
                throw CoreDataImportError(.unknownVersion, "--from names '\(given)', which is not a version of \(bundle.url.path) (versions: \(bundle.versions.map(\.name).joined(separator: ", ")))", store: path, version: given)
            }
            if let error = version.error {
                throw CoreDataImportError(.unreadableModel, "version '\(given)' of the model bundle cannot be read: \(error); fix the model version", store: path, version: given)
            }
            guard mappings[given]!.differences.isEmpty else {
                throw CoreDataImportError(.layoutMismatch, "the store does not have the layout of version '\(given)' (given with --from), so its data cannot be read with it; name the store's version, or leave --from out to find it",
                                          store: path, version: given, candidates: candidates.filter { $0.version == given })
            }
            return found(given, .given)
        }
        let evidence = CoreDataMetadataEvidence(metadata: copy.metadata, storeEntities: copy.entities.map(\.name), mappings: bundle.readableModels.compactMap { mappings[$0.version] })
        let exact = candidates.filter { $0.unreadable == nil && $0.differences.isEmpty }
        if exact.count == 1 { return found(exact[0].version, .layout) }
        if exact.count > 1 {
            let names = exact.map(\.version)
            let byIdentifier = names.filter(evidence.identified.contains)
            if byIdentifier.count == 1 { return found(byIdentifier[0], .versionIdentifier) }
            let byHashes = names.filter(evidence.hashedEntitiesMatch.contains)
            if byHashes.count == 1 { return found(byHashes[0], .entityHashes) }
            let identifiers = copy.metadata.versionIdentifiers
            let ids = identifiers.isEmpty ? "the store records no version identifier" : "the store's version identifiers (\(identifiers.sorted().joined(separator: ", "))) do not single one out"
            let hashes = copy.metadata.hashedEntities.isEmpty ? "" : ", nor do the entities of its version hashes (\(copy.metadata.hashedEntities.joined(separator: ", ")))"
            throw CoreDataImportError(.ambiguousVersion, "\(exact.count) versions of the bundle have the store's layout (\(exact.map { "'\($0.version)'" }.joined(separator: ", "))) and \(ids)\(hashes); name the store's version with --from",
                                      store: path, candidates: exact)
        }
        throw evidence.unknownVersionError(bundle: bundle, store: path, candidates: candidates)
    }
}
