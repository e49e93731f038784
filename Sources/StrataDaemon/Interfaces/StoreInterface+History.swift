import Foundation
import GRDB
import Strata
import StrataVarlink
import Synchronization

extension StoreInterface {
    /// Who writes: the peer's user (by name when the system knows it) and the name the client
    /// gave (`author`), recorded in the store's change history.
    struct Writer: Sendable {
        /// Longest `author` a client may give.
        static let maxAuthorLength = 256

        let user: String?
        let author: String?

        init(_ context: VarlinkCallContext, author: String?) throws {
            if let author, author.utf8.count > Self.maxAuthorLength || author.unicodeScalars.contains(where: { $0.value < 0x20 }) {
                throw VarlinkError.invalidParameter("author")
            }
            self.author = author
            self.user = context.peer.map { peer in
                if let entry = getpwuid(peer.uid), let name = entry.pointee.pw_name { return String(cString: name) }
                return String(peer.uid)
            }
        }
    }

    // MARK: - History

    static func history(_ parameters: StrataStore.History.Parameters, on hosted: HostedStore, limits: Limits) async throws -> StrataStore.History.Reply {
        let range = PersistentStore.historyPageLimits
        guard parameters.limit >= 1 else { throw VarlinkError.invalidParameter("limit") }
        guard parameters.limit <= Int64(range.upperBound) else {
            throw VarlinkError.limitExceeded("history_page", maximum: range.upperBound, parameter: "limit", reason:
                "a history page holds at most \(range.upperBound) transactions, asked for \(parameters.limit); page with the reply's next token")
        }
        let entities = parameters.entities.map(Set.init)
        let page = try await run(hosted, limits: limits, version: parameters.version) { context in
            // An older version's names both ways (``VersionBridge``).
            let bridge = context.servedBridge
            var page = try context.store.history(since: parameters.since, entities: entities.map { bridge?.currentNames(ofEntities: $0) ?? $0 },
                                                 limit: Int(parameters.limit))
            if let bridge { page.transactions = page.transactions.compactMap(bridge.served) }
            return page
        }
        return .init(transactions: page.transactions.map(Self.transaction), next: page.next, latest: page.latest)
    }

    /// A library transaction as the interface's `Transaction`.
    static func transaction(_ transaction: HistoryTransaction) -> StrataStore.Transaction {
        let changes = transaction.changes.map { change in
            StrataStore.Change(
                entity: change.entity, id: change.primaryKey,
                kind: StrataStore.Change.Kind(rawValue: change.kind.description) ?? .update, properties: change.properties,
                tombstone: change.tombstone.map { values in
                    .object(values.mapValues(Self.json))
                })
        }
        return StrataStore.Transaction(token: transaction.token, time: Self.iso8601(transaction.date),
                                       kind: transaction.kind == .gap ? .gap : .objects,
                                       user: transaction.user, author: transaction.author, changes: changes)
    }

    /// A tombstone value as JSON, as `Fetch` shows it (dates ISO 8601, data base64).
    static func json(_ value: Value) -> JSONValue {
        switch value {
        case .null: .null
        case .string(let s): .string(s)
        case .int(let i): .int(i)
        case .double(let d): .double(d)
        case .decimal(let d): .string("\(d)")
        case .bool(let b): .bool(b)
        case .date(let d): .string(iso8601(d))
        case .data(let d): .string(d.base64EncodedString())
        case .uuid(let u): .string(u.uuidString)
        case .uri(let u): .string(u.absoluteString)
        }
    }

    static func iso8601(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }

    /// A `HistoryError` as the interface's error.
    static func historyFailure(_ error: HistoryError, store: String?) -> StrataStore.Failure? {
        let name = store ?? "?"
        switch error.code {
        case .expired:
            return .historyExpired(.init(store: name, since: error.token ?? 0, purgedThrough: error.purgedThrough ?? 0,
                                         latest: error.latest ?? 0, reason: error.reason))
        case .invalidToken:
            return .invalidHistoryToken(.init(store: name, token: error.token ?? 0, latest: error.latest ?? 0, reason: error.reason))
        case .unknownEntity:
            return .objectError(.init(code: "unknownEntity", entity: error.entity, property: nil, reason: error.reason, operation: nil))
        case .limitOutOfRange:
            return nil
        case .store:
            guard let storeError = error.storeError else { return nil }
            return .storeFailure(.init(store: name, code: storeError.code.rawValue, reason: storeError.description))
        }
    }
}
