import Foundation

/// What a Core Data store's own metadata says about its version, compared with a bundle's
/// versions: the versions its `NSStoreModelVersionIdentifiers` name, and those with exactly
/// the entities of its `NSStoreModelVersionHashes`. Used to choose among versions with the
/// store's layout, and to give advice that fits when none has it.
struct CoreDataMetadataEvidence {
    /// Versions whose (non-empty) version identifier the store's metadata lists.
    var identified: [String] = []
    /// Versions whose entity names are exactly those of the store's version hashes.
    var hashedEntitiesMatch: [String] = []
    /// Versions that share at least one entity with the store's `Z_PRIMARYKEY` (after renames).
    var related: [String] = []
    /// The store's entity names (`Z_PRIMARYKEY`), as stored.
    var storeEntities: [String] = []
    let metadata: CoreDataStoreMetadata

    init(metadata: CoreDataStoreMetadata, storeEntities: [String], mappings: [CoreDataStoreMapping]) {
        self.metadata = metadata
        self.storeEntities = storeEntities.filter { !CoreDataStoreMapping.isPrivateEntity($0) }.sorted()
        let identifiers = Set(metadata.versionIdentifiers.filter { !$0.isEmpty })
        let hashed = Set(metadata.hashedEntities.filter { !CoreDataStoreMapping.isPrivateEntity($0) })
        for mapping in mappings {
            let model = mapping.model
            let names = Set(model.entities.map(\.name))
            if let identifier = model.versionIdentifier, !identifier.isEmpty, identifiers.contains(identifier) {
                identified.append(model.version)
            }
            if !hashed.isEmpty, hashed == names { hashedEntitiesMatch.append(model.version) }
            if !names.isDisjoint(with: mapping.entityNumbers.keys) { related.append(model.version) }
        }
    }

    /// The version the metadata points to, when it names exactly one: by identifier, else by
    /// the entities of its hashes (unless the store's identifiers name another version).
    var pointedVersion: (String, String)? {
        if identified.count == 1 {
            return (identified[0], "its NSStoreModelVersionIdentifiers (\(metadata.versionIdentifiers.joined(separator: ", "))) name it")
        }
        let identifierContradicts = !metadata.versionIdentifiers.filter { !$0.isEmpty }.isEmpty && identified.isEmpty
        if hashedEntitiesMatch.count == 1, !identifierContradicts {
            return (hashedEntitiesMatch[0], "its NSStoreModelVersionHashes list exactly that version's entities")
        }
        return nil
    }

    /// The error for a store no version of `bundle` has the layout of, with advice that fits
    /// what the metadata says: an unrelated bundle, a version that is in the bundle but
    /// changed, or a version the bundle lacks.
    func unknownVersionError(bundle: CoreDataModelBundle, store path: String, candidates: [CoreDataVersionMatch.Candidate]) -> CoreDataImportError {
        let name = bundle.url.lastPathComponent
        let unreadable = candidates.filter { $0.unreadable != nil }
        let hint = unreadable.isEmpty ? "" : " \(unreadable.count) version(s) cannot be read and may be the store's: fix them and try again."
        if related.isEmpty && !bundle.readableModels.isEmpty {
            let entities = storeEntities.isEmpty ? "none" : storeEntities.joined(separator: ", ")
            let bundleEntities = Set(bundle.readableModels.flatMap { $0.entities.map(\.name) }).sorted().joined(separator: ", ")
            return CoreDataImportError(.unknownVersion, "the model bundle \(name) is unrelated to the store: the store's entities (Z_PRIMARYKEY: \(entities)) are in none of its versions (which have \(bundleEntities)); pass the model bundle of the app that wrote the store with --model.\(hint)",
                                       store: path, candidates: unreadable)
        }
        if let (version, why) = pointedVersion {
            return CoreDataImportError(.unknownVersion, "the store's metadata says it was written with version '\(version)' of \(name) (\(why)), but the store's tables and columns differ from that version's layout: the bundle's '\(version)' is not the model as the store was written with it (edited after it shipped?) — restore '\(version)' as it shipped (e.g. from version control) and import again.\(hint) What differs from each version:",
                                       store: path, version: version, candidates: candidates)
        }
        var said = ""
        let identifiers = metadata.versionIdentifiers.filter { !$0.isEmpty }
        if !identifiers.isEmpty { said = " The store's version identifiers (\(identifiers.joined(separator: ", "))) name no version of the bundle." }
        return CoreDataImportError(.unknownVersion, "no version of \(name) has the store's layout (its tables and columns), so the store was written with a version the bundle does not have; add that version to the bundle.\(said)\(hint) What differs from each version:",
                                   store: path, candidates: candidates)
    }
}
