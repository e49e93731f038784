import Foundation
import GRDB

/// Reads pages of history: transactions after a token, their changes, names resolved.
enum HistoryReader {
    /// How many transactions a filtered page may scan per transaction it may return.
    static let scanFactor = 10

    static func page(since token: Int64, entityIDs: Set<Int64>?, limit: Int, latest: Int64, in db: Database) throws -> HistoryPage {
        var result: [HistoryTransaction] = []
        var cursor = token
        var scanned = 0
        let scanLimit = entityIDs == nil ? limit : limit * scanFactor
        while result.count < limit && scanned < scanLimit {
            let chunk = min(limit, scanLimit - scanned)
            let rows = try Row.fetchAll(db, sql: "SELECT token, at, kind, user, author FROM \(HistorySchema.transactionsTable) WHERE token > ? ORDER BY token LIMIT ?",
                                        arguments: [cursor, chunk])
            guard let last = rows.last else { break }
            let lastToken: Int64 = last["token"]
            let changes = try changesByToken(after: cursor, through: lastToken, entityIDs: entityIDs, in: db)
            for row in rows {
                let rowToken: Int64 = row["token"]
                cursor = rowToken
                scanned += 1
                let kind = HistoryTransaction.Kind(rawValue: row["kind"]) ?? .gap
                let list = changes[rowToken] ?? []
                if entityIDs != nil, kind == .objects, list.isEmpty { continue }
                result.append(HistoryTransaction(token: rowToken, date: Date(timeIntervalSince1970: row["at"]), kind: kind,
                                                 user: row["user"], author: row["author"], changes: list))
                if result.count == limit { break }
            }
            if rows.count < chunk { break }
        }
        return HistoryPage(transactions: result, next: cursor, latest: latest)
    }

    /// The changes of the transactions in `(after, through]`, names resolved, by token.
    static func changesByToken(after: Int64, through: Int64, entityIDs: Set<Int64>?, in db: Database) throws -> [Int64: [HistoryChange]] {
        let more = try HistorySchema.hasRuns(in: db) ? "more_objects" : "NULL"
        let rows = try Row.fetchAll(db, sql: """
            SELECT token, entity, object, kind, properties, tombstone, \(more) AS more_objects FROM \(HistorySchema.changesTable)
            WHERE token > ? AND token <= ? ORDER BY token, seq
            """, arguments: [after, through])
        var ids: Set<Int64> = []
        var decoded: [(token: Int64, entity: Int64, objects: [Int64], kind: Int, properties: [Int64], tombstone: [Int64: Value])] = []
        for row in rows {
            let entity: Int64 = row["entity"]
            if let entityIDs, !entityIDs.contains(entity) { continue }
            let properties = (row["properties"] as String? ?? "").split(separator: ",").compactMap { Int64($0) }
            let tombstone = (row["tombstone"] as String?).map(TombstoneCoding.decode) ?? [:]
            ids.insert(entity)
            ids.formUnion(properties)
            ids.formUnion(tombstone.keys)
            let objects = HistoryObjectRun.unpack(first: row["object"], more: row["more_objects"])
            decoded.append((row["token"], entity, objects, row["kind"], properties, tombstone))
        }
        let names = try HistorySchema.names(ids, in: db)
        var result: [Int64: [HistoryChange]] = [:]
        for change in decoded {
            var tombstone: [String: Value]?
            if !change.tombstone.isEmpty {
                tombstone = [:]
                for (id, value) in change.tombstone { tombstone![names[id]?.property ?? "#\(id)"] = value }
            }
            let entity = names[change.entity]?.entity ?? "#\(change.entity)"
            let kind = HistoryChange.Kind(rawValue: change.kind) ?? .update
            let properties = change.properties.map { names[$0]?.property ?? "#\($0)" }.sorted()
            result[change.token, default: []].append(contentsOf: change.objects.map {
                HistoryChange(entity: entity, primaryKey: $0, kind: kind, properties: properties, tombstone: tombstone)
            })
        }
        return result
    }
}
