import Foundation

/// Which source entity and property each destination entity and property continues, through
/// renaming identifiers (Core Data's rule) or, failing that, equal names.
///
/// A destination element's `renamingIdentifier` names its source element. When no source
/// element has that name, the element's own name is tried, so that a renaming identifier
/// that refers to an older version (chained renames, migrated hop by hop) still matches a
/// source that already carries the new name. Explicit renaming identifiers win over equal
/// names; two destination elements claiming one source element is an ambiguous rename.
struct ModelMatching: Sendable {
    let source: ObjectModel
    let destination: ObjectModel
    /// Destination entity -> source entity.
    private(set) var sourceEntity: [String: String] = [:]
    /// Source entity -> destination entity.
    private(set) var destinationEntity: [String: String] = [:]

    init(source: ObjectModel, destination: ObjectModel) throws(MigrationError) {
        self.source = source
        self.destination = destination
        // Explicit renaming identifiers first, then equal names.
        for pass in 0..<2 {
            for entity in destination.entities where sourceEntity[entity.name] == nil {
                let candidate: String?
                if pass == 0 {
                    guard let id = entity.renamingIdentifier, id != entity.name, source.entity(named: id) != nil else { continue }
                    candidate = id
                } else {
                    candidate = source.entity(named: entity.name) != nil ? entity.name : nil
                }
                guard let name = candidate else { continue }
                if let other = destinationEntity[name] {
                    if pass == 1 { continue }  // the name is taken by an explicit rename
                    throw MigrationError(.ambiguousRename, "both '\(other)' and '\(entity.name)' name source entity '\(name)' as their renaming identifier; give only one of them that identifier", sourceVersion: source.version, destinationVersion: destination.version, entity: entity.name, change: "rename entity '\(name)'")
                }
                sourceEntity[entity.name] = name
                destinationEntity[name] = entity.name
            }
        }
    }

    // MARK: - Properties

    /// A source property matched by a destination property.
    struct SourceProperty: Hashable {
        var entity: String
        var name: String
    }

    /// The source entities whose properties a property declared on destination entity `name`
    /// may continue: its counterpart, the counterpart's ancestors (a property moved down) and the
    /// counterparts of its sub-entities (a property moved up).
    func candidateSourceEntities(for name: String) -> [Entity] {
        var names: [String] = []
        if let s = sourceEntity[name] { names += source.ancestry(of: s).map(\.name) }
        for sub in destination.hierarchy(of: name).dropFirst() {
            if let s = sourceEntity[sub.name] { names.append(s) }
        }
        var seen: Set<String> = []
        return names.filter { seen.insert($0).inserted }.compactMap(source.entity(named:))
    }

    enum PropertyKind { case attribute, composite, relationship }

    private static func kind(of name: String, in entity: Entity) -> PropertyKind? {
        if entity.attribute(named: name) != nil { return .attribute }
        if entity.composite(named: name) != nil { return .composite }
        if entity.relationship(named: name) != nil { return .relationship }
        return nil
    }

    /// Finds the source property a destination property continues.
    /// - Throws: when the source property is of another kind (an attribute that became a relationship…).
    func sourceProperty(entity: String, name: String, renamingIdentifier: String?, kind: PropertyKind) throws(MigrationError) -> SourceProperty? {
        let candidates = candidateSourceEntities(for: entity)
        var names = [renamingIdentifier, name].compactMap { $0 }
        // Explicit renaming identifiers win: a name claimed by another property's identifier
        // does not match by equality.
        if renamingIdentifier != name && explicitlyClaimed(name, in: entity, except: renamingIdentifier) { names.removeAll { $0 == name } }
        for wanted in names {
            for candidate in candidates {
                guard let found = Self.kind(of: wanted, in: candidate) else { continue }
                if found != kind {
                    throw error(.notInferable, "source property '\(candidate.name).\(wanted)' is a \(found) and its continuation is a \(kind); \(MigrationError.stagedAdvice)", entity: entity, property: name, change: "\(found) -> \(kind)")
                }
                return SourceProperty(entity: candidate.name, name: wanted)
            }
        }
        return nil
    }

    /// Whether another property of `entity`'s destination hierarchy names `name` as its renaming identifier.
    private func explicitlyClaimed(_ name: String, in entity: String, except: String?) -> Bool {
        guard let root = destination.rootEntity(of: entity) else { return false }
        for e in destination.hierarchy(of: root.name) {
            let ids = e.attributes.map { ($0.name, $0.renamingIdentifier) } + e.composites.map { ($0.name, $0.renamingIdentifier) }
                + e.relationships.map { ($0.name, $0.renamingIdentifier) }
            if ids.contains(where: { $0.1 == name && $0.0 != name }) { return true }
        }
        return false
    }

    /// The source keypath of a destination attribute keypath (`name` or `composite.element…`)
    /// declared on `entity`, and the source entity that declares it.
    func sourceAttributeKeyPath(entity: String, keyPath: String) throws(MigrationError) -> (entity: String, keyPath: String)? {
        let parts = keyPath.split(separator: ".").map(String.init)
        guard let declaring = destination.entity(named: entity) else { return nil }
        if parts.count == 1 {
            guard let a = declaring.attribute(named: parts[0]),
                let match = try sourceProperty(entity: entity, name: a.name, renamingIdentifier: a.renamingIdentifier, kind: .attribute)
            else { return nil }
            return (match.entity, match.name)
        }
        guard let composite = declaring.composite(named: parts[0]),
            let match = try sourceProperty(entity: entity, name: composite.name, renamingIdentifier: composite.renamingIdentifier, kind: .composite),
            let sourceComposite = source.entity(named: match.entity)?.composite(named: match.name)
        else { return nil }
        var destinationElements = composite.elements
        var sourceElements = sourceComposite.elements
        var sourcePath = [match.name]
        for (i, part) in parts.dropFirst().enumerated() {
            guard let element = destinationElements.first(where: { $0.name == part }) else { return nil }
            let renaming: String? = switch element {
            case .attribute(let a): a.renamingIdentifier
            case .composite(let c): c.renamingIdentifier
            }
            let isLast = i == parts.count - 2
            guard let sourceElement = [renaming, element.name].compactMap({ $0 }).lazy
                .compactMap({ name in sourceElements.first { $0.name == name } }).first
            else { return nil }
            switch (element, sourceElement) {
            case (.attribute, .attribute) where isLast:
                sourcePath.append(sourceElement.name)
                return (match.entity, sourcePath.joined(separator: "."))
            case (.composite(let d), .composite(let s)) where !isLast:
                sourcePath.append(s.name)
                destinationElements = d.elements
                sourceElements = s.elements
            default:
                throw error(.notInferable, "composite element '\(keyPath)' changes between an attribute and a nested composite; \(MigrationError.stagedAdvice)", entity: entity, property: keyPath, change: "composite element kind")
            }
        }
        return nil
    }

    /// The source relationship a destination relationship continues.
    func sourceRelationship(entity: String, name: String) throws(MigrationError) -> (entity: String, relationship: Relationship)? {
        guard let r = destination.relationship(name, of: entity),
            let declaring = destination.ancestry(of: entity).first(where: { $0.relationship(named: name) != nil }),
            let match = try sourceProperty(entity: declaring.name, name: r.name, renamingIdentifier: r.renamingIdentifier, kind: .relationship),
            let sr = source.entity(named: match.entity)?.relationship(named: match.name)
        else { return nil }
        return (match.entity, sr)
    }

    /// Whether a non-optional destination attribute keypath must hold a value in every row.
    func isRequired(entity: String, keyPath: String) -> Bool {
        let parts = keyPath.split(separator: ".").map(String.init)
        guard let declaring = destination.ancestry(of: entity).first(where: { $0.attribute(named: parts[0]) != nil || $0.composite(named: parts[0]) != nil }) else { return false }
        if parts.count == 1 { return declaring.attribute(named: parts[0]).map { !$0.isOptional } ?? false }
        guard var composite = declaring.composite(named: parts[0]), !composite.isOptional else { return false }
        for part in parts.dropFirst() {
            switch composite.elements.first(where: { $0.name == part }) {
            case .attribute(let a)?: return !a.isOptional
            case .composite(let c)?:
                if c.isOptional { return false }
                composite = c
            case nil: return false
            }
        }
        return false
    }

    func error(_ code: MigrationError.Code, _ reason: String, entity: String?, property: String? = nil, change: String? = nil) -> MigrationError {
        MigrationError(code, reason, sourceVersion: source.version, destinationVersion: destination.version,
                       entity: entity, property: property, change: change)
    }
}
