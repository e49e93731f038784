import Foundation

/// One FROM scope of a query: the main query (`t0`) or a to-many subquery, with the LEFT
/// JOINs that its to-one keypaths need (one per relationship hop, shared by every keypath
/// that goes through it).
final class QueryScope {
    let entityName: String
    let alias: String
    private(set) var joins: [String] = []
    private var joinAliases: [String: String] = [:]

    init(entityName: String, alias: String) {
        self.entityName = entityName
        self.alias = alias
    }

    /// The alias of the row a to-one foreign key points to, adding the LEFT JOIN the first time.
    ///
    /// - Throws: ``FetchPredicateError/Code/limitExceeded`` when the scope already joins
    ///   ``PredicateLimits/maxJoinedTables`` tables (SQLite allows 64 tables in one join).
    func join(from ownerAlias: String, foreignKey: String, table: String, compiler: PredicateCompiler,
              keyPath: String, site: ErrorSite) throws(FetchPredicateError) -> String {
        let key = "\(ownerAlias).\(foreignKey)"
        if let alias = joinAliases[key] { return alias }
        guard joins.count < compiler.limits.maxJoinedTables else {
            throw compiler.fail(.limitExceeded, "the keypaths of this fetch go through more than \(compiler.limits.maxJoinedTables) to-one relationships from '\(entityName)' (maxJoinedTables; SQLite joins at most 64 tables in one query); the limit was reached at '\(PredicateCompiler.abbreviated(keyPath))'. Use fewer distinct to-one keypaths, or split the fetch", site, keyPath: keyPath)
        }
        let alias = compiler.newAlias("t")
        joinAliases[key] = alias
        joins.append(" LEFT JOIN \(quoteIdentifier(table)) AS \(alias) ON \(alias).\(quoteIdentifier(StorageLayout.primaryKeyColumn)) = \(ownerAlias).\(quoteIdentifier(foreignKey))")
        return alias
    }

    var joinSQL: String { joins.joined() }
}

/// Where a keypath leads, in a scope.
enum ResolvedKeyPath {
    /// An attribute or composite leaf: a column of the scope's row or of a joined row.
    case attribute(sql: String, attribute: Attribute, entity: String)
    /// An object: `self` (the row's primary key) or a to-one relationship (its foreign key).
    case object(sql: String, destination: String)
    /// A to-many relationship reached through to-one hops, with what follows it.
    case toMany(ToManyHop)
}

struct ToManyHop {
    var ownerAlias: String
    var ownerEntity: String
    var relationship: Relationship
    var storage: RelationshipStorage
    /// The keypath up to and including the relationship (`owner.tags`).
    var path: String
    /// The components after the relationship (`["name"]`, `["@count"]`, `[]`).
    var remainder: [String]

    var isCollectionOperator: Bool { remainder.first?.hasPrefix("@") ?? false }
}

/// Where an error points: the format and the UTF-8 offset of the operand at fault.
struct ErrorSite {
    var format: String
    var offset: Int?

    init(_ source: PredicateSource, offset: Int?) {
        self.format = source.format
        self.offset = source.format.isEmpty ? nil : offset
    }

    init(format: String, offset: Int?) {
        self.format = format
        self.offset = offset
    }
}

extension PredicateCompiler {
    // MARK: - Keypath resolution

    /// Resolves `keyPath` in `scope`, adding the LEFT JOINs its to-one hops need.
    ///
    /// Runs in time linear in the keypath's length: at each hop only as many components are
    /// tried as the entity's longest attribute keypath has (composite leaves), and the
    /// messages that quote the path walked so far are only built on failure.
    func resolve(_ keyPath: String, in scope: QueryScope, at site: ErrorSite) throws(FetchPredicateError) -> ResolvedKeyPath {
        let componentCount = keyPath.utf8.reduce(1) { $0 + ($1 == UInt8(ascii: ".") ? 1 : 0) }
        guard componentCount <= limits.maxKeyPathComponents else {
            throw fail(.limitExceeded, "the keypath '\(Self.abbreviated(keyPath))' has \(componentCount) components, more than the limit of \(limits.maxKeyPathComponents) (maxKeyPathComponents); shorten the chain of relationships", site, keyPath: keyPath)
        }
        var components = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if components.first == "self" || components.first == "SELF" { components.removeFirst() }
        if components.contains("") {
            throw fail(.unknownKeyPath, "the keypath '\(keyPath)' has an empty component; write names separated by single dots", site, keyPath: keyPath)
        }
        var entityName = scope.entityName
        var alias = scope.alias
        if components.isEmpty {
            return .object(sql: "\(alias).\(quoteIdentifier(StorageLayout.primaryKeyColumn))", destination: entityName)
        }
        var i = 0
        while true {
            guard let entityLayout = layout.entity(entityName) else {
                throw fail(.unknownEntity, "the model has no entity '\(entityName)'", site, keyPath: keyPath)
            }
            let hop = i
            func via() -> String { hop == 0 ? "" : " (reached through '\(components[..<hop].joined(separator: "."))')" }
            // Attributes and composite leaves, longest match first (`colorScheme.primary`).
            let longest = min(components.count, i + attributeKeyPathDepth(of: entityName, entityLayout))
            for j in stride(from: longest, to: i, by: -1) {
                let key = components[i..<j].joined(separator: ".")
                guard let column = entityLayout.attributeColumns[key] else { continue }
                if j == components.count {
                    return .attribute(sql: "\(alias).\(quoteIdentifier(column.column))", attribute: column.attribute, entity: entityName)
                }
                let next = components[j]
                let what = next.hasPrefix("@")
                    ? "'\(next)' needs a to-many relationship before it"
                    : "an attribute has no properties"
                throw fail(next.hasPrefix("@") ? .invalidAggregate : .unknownKeyPath,
                           "in keypath '\(keyPath)', '\(key)' is a \(column.attribute.type.rawValue) attribute of entity '\(entityName)'\(via()); \(what)",
                           site, keyPath: keyPath)
            }
            let name = components[i]
            if let composite = model.allComposites(of: entityName).first(where: { $0.name == name }) {
                let leaves = composite.leaves.map { ([name] + $0.path).joined(separator: ".") }
                if i + 1 < components.count {
                    let wanted = components[i...].joined(separator: ".")
                    throw fail(.unknownKeyPath,
                               "entity '\(entityName)'\(via()) has no composite leaf '\(wanted)' (in keypath '\(keyPath)'); its leaves are \(leaves.joined(separator: ", "))\(FetchPredicateError.didYouMean(FetchPredicateError.suggestions(for: wanted, in: leaves)))",
                               site, keyPath: keyPath)
                }
                throw fail(.invalidOperator,
                           "'\(keyPath)' is a composite attribute of entity '\(entityName)'\(via()) and cannot be used as a whole; use one of its leaves: \(leaves.joined(separator: ", "))",
                           site, keyPath: keyPath)
            }
            if let relationship = model.relationship(name, of: entityName), let storage = entityLayout.relationships[name] {
                if relationship.isToMany {
                    return .toMany(ToManyHop(ownerAlias: alias, ownerEntity: entityName, relationship: relationship,
                                             storage: storage, path: components[...i].joined(separator: "."),
                                             remainder: Array(components[(i + 1)...])))
                }
                guard case .foreignKey(let column, let table) = storage else {
                    throw fail(.unknownKeyPath, "relationship '\(name)' of entity '\(entityName)' has no storage", site, keyPath: keyPath)
                }
                if i == components.count - 1 {
                    return .object(sql: "\(alias).\(quoteIdentifier(column))", destination: relationship.destination)
                }
                if components[i + 1].hasPrefix("@") {
                    throw fail(.invalidAggregate,
                               "'\(components[i + 1])' needs a to-many relationship, but '\(components[...i].joined(separator: "."))' is a to-one relationship of entity '\(entityName)' (in keypath '\(keyPath)')",
                               site, keyPath: keyPath)
                }
                alias = try scope.join(from: alias, foreignKey: column, table: table, compiler: self, keyPath: keyPath, site: site)
                entityName = relationship.destination
                i += 1
                continue
            }
            if name.hasPrefix("@") {
                throw fail(.invalidAggregate, "'\(name)' must follow a to-many relationship, as in items.\(name) (in keypath '\(keyPath)')", site, keyPath: keyPath)
            }
            throw unknownProperty(name, of: entityName, via: via(), keyPath: keyPath, site: site)
        }
    }

    /// The most dot-separated components of an attribute keypath of `entityName` (cached).
    private func attributeKeyPathDepth(of entityName: String, _ entityLayout: EntityLayout) -> Int {
        if let depth = attributeKeyPathDepth[entityName] { return depth }
        let depth = entityLayout.attributeColumns.keys.map { key in key.utf8.reduce(1) { $0 + ($1 == UInt8(ascii: ".") ? 1 : 0) } }.max() ?? 0
        attributeKeyPathDepth[entityName] = depth
        return depth
    }

    /// A keypath shortened for a message: its first 60 and last 20 characters.
    static func abbreviated(_ keyPath: String) -> String {
        keyPath.count <= 100 ? keyPath : "\(keyPath.prefix(60))…\(keyPath.suffix(20))"
    }

    private func unknownProperty(_ name: String, of entityName: String, via: String, keyPath: String, site: ErrorSite) -> FetchPredicateError {
        let candidates = Array(layout.entity(entityName)?.attributeColumns.keys ?? [:].keys)
            + model.allRelationships(of: entityName).map(\.name)
            + model.allComposites(of: entityName).map(\.name)
        var reason = "entity '\(entityName)'\(via) has no property '\(name)' (in keypath '\(keyPath)')"
        let owners = model.hierarchy(of: entityName).dropFirst().filter { $0.propertyNames.contains(name) }.map(\.name)
        if let owner = owners.first {
            reason += "; '\(name)' is declared on the sub-entity '\(owner)': fetch '\(owner)' to filter on it"
        } else {
            let suggestions = FetchPredicateError.suggestions(for: name, in: candidates)
            reason += suggestions.isEmpty
                ? "; its properties are \(candidates.sorted().joined(separator: ", "))"
                : FetchPredicateError.didYouMean(suggestions)
        }
        return fail(.unknownKeyPath, reason, site, keyPath: keyPath)
    }

    // MARK: - To-many storage

    /// The FROM clause and correlation condition that reach the related rows of a to-many hop.
    func relatedRows(of hop: ToManyHop) -> (from: String, link: String, alias: String) {
        let pk = quoteIdentifier(StorageLayout.primaryKeyColumn)
        let destinationTable = layout.entity(hop.relationship.destination)?.table ?? hop.relationship.destination
        switch hop.storage {
        case .inverseForeignKey(let table, let column, _):
            let alias = newAlias("t")
            return ("\(quoteIdentifier(table)) AS \(alias)", "\(alias).\(quoteIdentifier(column)) = \(hop.ownerAlias).\(pk)", alias)
        case .joinTable(let name, let own, let other, _):
            let j = newAlias("j")
            let alias = newAlias("t")
            return ("\(quoteIdentifier(name)) AS \(j) JOIN \(quoteIdentifier(destinationTable)) AS \(alias) ON \(alias).\(pk) = \(j).\(quoteIdentifier(other))",
                    "\(j).\(quoteIdentifier(own)) = \(hop.ownerAlias).\(pk)", alias)
        case .foreignKey(let column, let table):
            // Not reachable for a to-many hop; kept total for safety.
            let alias = newAlias("t")
            return ("\(quoteIdentifier(table)) AS \(alias)", "\(alias).\(pk) = \(hop.ownerAlias).\(quoteIdentifier(column))", alias)
        }
    }

    /// `(SELECT COUNT(*) …)`, `(SELECT COALESCE(SUM(x), 0) …)`, … for `tags.@count`, `items.@sum.price`.
    func collectionTerm(_ hop: ToManyHop, keyPath: String, at site: ErrorSite) throws(FetchPredicateError) -> Term {
        let op = hop.remainder[0]
        let pk = quoteIdentifier(StorageLayout.primaryKeyColumn)
        switch op {
        case "@count":
            guard hop.remainder.count == 1 else {
                throw fail(.unknownKeyPath, "nothing may follow @count in '\(keyPath)'", site, keyPath: keyPath)
            }
            let sql: String
            switch hop.storage {
            case .joinTable(let name, let own, _, _):
                let j = newAlias("j")
                sql = "(SELECT COUNT(*) FROM \(quoteIdentifier(name)) AS \(j) WHERE \(j).\(quoteIdentifier(own)) = \(hop.ownerAlias).\(pk))"
            default:
                let rows = relatedRows(of: hop)
                sql = "(SELECT COUNT(*) FROM \(rows.from) WHERE \(rows.link))"
            }
            return Term(sql: SQLFragment(sql), type: .int64, keyPath: keyPath, entity: hop.ownerEntity, offset: site.offset)
        case "@sum", "@avg", "@min", "@max":
            guard hop.remainder.count >= 2 else {
                throw fail(.unknownKeyPath, "\(op) needs an attribute after it, as in \(hop.path).\(op).price", site, keyPath: keyPath)
            }
            let rows = relatedRows(of: hop)
            let inner = QueryScope(entityName: hop.relationship.destination, alias: rows.alias)
            let rest = hop.remainder.dropFirst().joined(separator: ".")
            guard case .attribute(let column, let attribute, _) = try resolve(rest, in: inner, at: site) else {
                throw fail(.invalidAggregate, "\(op) needs an attribute of '\(hop.relationship.destination)' after it; '\(rest)' is not one (in keypath '\(keyPath)')", site, keyPath: keyPath)
            }
            if op == "@sum" || op == "@avg", !attribute.type.isNumeric {
                throw fail(.invalidOperator, "\(op) needs a numeric attribute; '\(rest)' is a \(attribute.type.rawValue) attribute of '\(hop.relationship.destination)'", site, keyPath: keyPath)
            }
            let function: String
            var type = attribute.type
            switch op {
            case "@sum": function = "COALESCE(SUM(\(column)), 0)"
            case "@avg": function = "AVG(\(column))"; type = .double
            case "@min": function = "MIN(\(column))"
            default: function = "MAX(\(column))"
            }
            return Term(sql: SQLFragment("(SELECT \(function) FROM \(rows.from)\(inner.joinSQL) WHERE \(rows.link))"),
                        type: type, keyPath: keyPath, entity: hop.ownerEntity, offset: site.offset)
        default:
            throw fail(.unknownKeyPath, "unknown collection operator '\(op)' in '\(keyPath)'; use @count, @sum, @avg, @min or @max", site, keyPath: keyPath)
        }
    }

    func fail(_ code: FetchPredicateError.Code, _ reason: String, _ site: ErrorSite, keyPath: String? = nil) -> FetchPredicateError {
        FetchPredicateError(code, reason, format: site.format, position: site.offset, entity: rootEntity, keyPath: keyPath)
    }
}
