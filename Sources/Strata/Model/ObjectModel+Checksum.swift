import Crypto
import Foundation

extension ObjectModel {
    /// The version checksum: base64 of SHA-256 over ``canonicalEncoding``.
    ///
    /// Like Core Data's version hashes, it covers everything that affects storage — entity,
    /// property and index names, types, optionality, relationships, composites, indexes,
    /// constraints, inheritance — and nothing else: not the version name, renaming
    /// identifiers, user info, default values, delete rules or relationship counts. It does
    /// not depend on declaration order (transient attributes are not stored and not covered), so it is stable across runs, platforms and
    /// reformatting of a model file.
    public var checksum: String {
        Data(SHA256.hash(data: Data(canonicalEncoding.utf8))).base64EncodedString()
    }

    /// One hash per entity (base64 SHA-256 of that entity's canonical encoding), like Core
    /// Data's `entityVersionHashesByName`.
    public var entityHashes: [String: String] {
        var result: [String: String] = [:]
        for entity in entities {
            result[entity.name] = Data(SHA256.hash(data: Data(Self.canonical(entity).utf8))).base64EncodedString()
        }
        return result
    }

    /// The canonical text the checksum is computed over: one line per fact, sorted.
    public var canonicalEncoding: String {
        "strata-model-v1\n" + entities.sorted { $0.name < $1.name }.map(Self.canonical).joined()
    }

    static func canonical(_ entity: Entity) -> String {
        var lines: [String] = []
        let e = quote(entity.name)
        lines.append("entity \(e) parent=\(entity.parent.map(quote) ?? "-") abstract=\(entity.isAbstract)")
        for a in entity.attributes where !a.isTransient {
            lines.append("attribute \(e).\(quote(a.name)) \(a.type.rawValue) optional=\(a.isOptional)")
        }
        for c in entity.composites {
            lines.append("composite \(e).\(quote(c.name)) optional=\(c.isOptional)")
            for leaf in c.leaves {
                let path = ([c.name] + leaf.path).map(quote).joined(separator: ".")
                lines.append("leaf \(e).\(path) \(leaf.attribute.type.rawValue) optional=\(leaf.attribute.isOptional)")
            }
        }
        for r in entity.relationships {
            lines.append("relationship \(e).\(quote(r.name)) -> \(quote(r.destination)) inverse=\(r.inverse.map(quote) ?? "-") toMany=\(r.isToMany) ordered=\(r.isOrdered) optional=\(r.isOptional)")
        }
        for i in entity.indexes {
            let elements = i.elements.map { "\(quote($0.keyPath)):\($0.ascending ? "asc" : "desc")" }.joined(separator: ",")
            lines.append("index \(e).\(quote(i.name)) \(elements)")
        }
        for u in entity.uniquenessConstraints {
            lines.append("unique \(e) \(u.keyPaths.sorted().map(quote).joined(separator: ","))")
        }
        return lines.sorted().joined(separator: "\n") + "\n"
    }

    /// Names are quoted and escaped so that no name can forge another line.
    private static func quote(_ s: String) -> String {
        "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n") + "\""
    }
}
