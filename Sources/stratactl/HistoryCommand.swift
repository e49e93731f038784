import ArgumentParser
import Foundation
import Strata
import StrataVarlink

/// Options of the commands that talk to stratad's data socket (`io.strata.Store`).
struct DataSocketOptions: ParsableArguments {
    @Option(name: .customLong("data-socket"), help: "The data socket (default: $STRATA_DATA_SOCKET or /run/strata/data.sock).")
    var dataSocket: String?

    var socketPath: String { dataSocket ?? ProcessInfo.processInfo.environment["STRATA_DATA_SOCKET"] ?? "/run/strata/data.sock" }
}

/// Runs calls on the data socket and maps failures to messages and exit codes (``ExitStatus``).
func withDataSocket(_ options: DataSocketOptions, json: Bool, _ body: (VarlinkClient.Connection) async throws -> Void) async throws {
    do {
        try await VarlinkClient.withConnection(to: options.socketPath) { try await body($0) }
    } catch let error as VarlinkClient.ClientError {
        throw ExitStatus.fail("\(error) (is stratad running? set --data-socket or STRATA_DATA_SOCKET)", code: ExitStatus.code(for: error))
    } catch let error as VarlinkError {
        if json { print(JSONValue.object(["error": .string(error.name), "parameters": .object(error.parameters)]).prettyPrinted()) }
        let code: ExitCode = switch StrataStore.Failure(error) {
        case .noSuchStore?: ExitStatus.notFound
        case .historyExpired?, .invalidHistoryToken?, .invalidPredicate?, .objectError?: ExitStatus.invalid
        // The named model version is not served beside the store's (the reason says what to do).
        case .versionNotServed?: ExitStatus.incompatible
        default: ExitStatus.code(for: error)
        }
        throw ExitStatus.fail("\(error.name): \(error.reason)", code: code)
    }
}

/// `stratactl history STORE [--since TOKEN] [--entity E …] [--limit N] [--json]`, and
/// `stratactl history purge STORE-FILE --before TOKEN|DATE`.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show a hosted store's change history, or purge a store file's history.",
        discussion: """
            Each line is one transaction: its token, time, user and author, then one line per \
            changed object (insert, update with the changed properties, delete with its \
            tombstone). A "gap" is a write by another process that recorded no history. \
            Continue with --since set to the printed "next" token. See docs/History.md.

            Examples:
              stratactl history aircraft --since 120 --entity Aircraft
              stratactl history purge var/aircraft.sqlite --before 2026-11-18T00:00:00Z
            """,
        subcommands: [HistoryShowCommand.self, HistoryPurgeCommand.self],
        defaultSubcommand: HistoryShowCommand.self
    )
}

struct HistoryShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show the transactions after a token (over the data socket).")

    @Argument(help: "The store's name in stratad's configuration.")
    var store: String

    @Option(name: .long, help: "Show the transactions after this token (default 0: from the oldest kept).")
    var since: Int64 = 0

    @Option(name: .long, parsing: .singleValue, help: "Only transactions that changed this entity (repeat).")
    var entity: [String] = []

    @Option(name: .long, help: "At most this many transactions (1 to 10000).")
    var limit: Int64 = 100

    @Option(name: .long, help: ArgumentHelp("Show the history in the names of this model version of the store's model directory (an older one: docs/Rollout.md).", valueName: "name"))
    var version: String?

    @OptionGroup var socket: DataSocketOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await withDataSocket(socket, json: output.json) { data in
            let reply = try await data.call(StrataStore.History.self, .init(
                store: store, since: since, entities: entity.isEmpty ? nil : entity, limit: limit, version: version))
            if output.json { return printReply(reply) }
            for transaction in reply.transactions { print(HistoryText.render(transaction)) }
            print("next \(reply.next) (latest \(reply.latest))")
        }
    }
}

struct HistoryPurgeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge",
        abstract: "Remove a store file's history up to a token or before a date (writes the store).",
        discussion: """
            Runs in batches of --batch changes, each in its own short write transaction, so \
            that a running stratad keeps serving. Clients that follow history from an older \
            token then get HistoryExpired and must refetch.
            """
    )

    @Argument(help: "The store file.")
    var store: String

    @Option(name: .long, help: "A token (purge it and everything before), or an ISO 8601 date (purge what committed before it).")
    var before: String

    @Option(name: .long, help: "Changes removed per write transaction (1 to 100000).")
    var batch: Int = 1_000

    @OptionGroup var output: OutputOptions

    func run() throws {
        let text = try ExitStatus.reporting { () throws -> String in
            guard (1...100_000).contains(batch) else { throw UsageError("--batch must be between 1 and 100000 (got \(batch))") }
            let url = URL(fileURLWithPath: store)
            let metadata = try PersistentStore.metadata(at: url)
            let opened = try PersistentStore.open(at: url, model: metadata.model, options: StoreOptions(createIfMissing: false))
            defer { try? opened.close() }
            let token: Int64
            if let number = Int64(before) {
                guard number >= 0 else { throw UsageError("--before \(before): tokens are 0 or more") }
                token = number
            } else if let date = HistoryText.date(before) {
                token = try opened.historyToken(before: date)
            } else {
                throw UsageError("--before \(before) is neither a token (an integer) nor an ISO 8601 date such as 2026-11-18T00:00:00Z")
            }
            var transactions = 0
            var changes = 0
            var batches = 0
            while true {
                let result = try opened.purgeHistory(through: token, batchSize: batch)
                transactions += result.transactions
                changes += result.changes
                batches += 1
                if result.isComplete { break }
            }
            if output.json {
                return JSONValue.object(["through": .int(token), "transactions": .int(Int64(transactions)), "changes": .int(Int64(changes)),
                                         "batches": .int(Int64(batches))]).prettyPrinted()
            }
            return "purged \(transactions) transaction(s) and \(changes) change(s) through token \(token) in \(batches) batch(es)"
        }
        print(text)
    }
}

/// `stratactl watch STORE [--entity E …] [--where PREDICATE] [--since TOKEN] [--json]`.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow a hosted store's changes as they commit (over the data socket), until interrupted.",
        discussion: """
            Prints each transaction as `stratactl history` does (with --json, one JSON object \
            per line). --where needs exactly one --entity and applies to the objects as they \
            are now; deletes always show. Resume after an interruption with --since and the \
            last token printed. --version watches in an older model version's names (a \
            version the store is past: docs/Rollout.md); a newer one is refused with what to do.
            """
    )

    @Argument(help: "The store's name in stratad's configuration.")
    var store: String

    @Option(name: .long, parsing: .singleValue, help: "Only changes of this entity (repeat).")
    var entity: [String] = []

    @Option(name: .customLong("where"), help: "A predicate the changed objects must match (one --entity).")
    var predicate: String?

    @Option(name: .long, help: "Start after this token (default: from now on).")
    var since: Int64?

    @Option(name: .long, help: ArgumentHelp("Watch as a client of this model version does: its entity and property names, in --where too (an older version of the store's model directory: docs/Rollout.md).", valueName: "name"))
    var version: String?

    @OptionGroup var socket: DataSocketOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await withDataSocket(socket, json: output.json) { data in
            _ = try await data.callMore(StrataStore.Observe.self, .init(
                store: store, entities: entity.isEmpty ? nil : entity, predicate: predicate, since: since, version: version)) { reply in
                // Written unbuffered: a person or a pipe sees each transaction as it commits.
                let text: String
                if output.json {
                    let line = (try? JSONValueEncoder().encode(reply)) ?? .null
                    text = String(decoding: try JSONSerialization.data(withJSONObject: line.foundationObject as Any, options: [.sortedKeys]), as: UTF8.self)
                } else if let transaction = reply.transaction {
                    text = HistoryText.render(transaction)
                } else {
                    text = "watching \(store) after token \(reply.token)"
                }
                FileHandle.standardOutput.write(Data((text + "\n").utf8))
            }
        }
    }
}

/// History as text for people.
enum HistoryText {
    static func render(_ transaction: StrataStore.Transaction) -> String {
        var who = [transaction.user, transaction.author.map { "(\($0))" }].compactMap { $0 }.joined(separator: " ")
        if who.isEmpty { who = "-" }
        var lines = ["\(transaction.token)  \(transaction.time)  \(transaction.kind == .gap ? "gap: written by another process without history; refetch" : who)"]
        for change in transaction.changes {
            var line = "  \(change.kind.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)) \(change.entity) \(change.id)"
            if !change.properties.isEmpty { line += "  " + change.properties.joined(separator: ", ") }
            if let tombstone = change.tombstone, case .object(let values) = tombstone, !values.isEmpty {
                line += "  tombstone " + values.keys.sorted().map { "\($0)=\(values[$0]!.compactText)" }.joined(separator: " ")
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    static func date(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date(text + "T00:00:00Z", strategy: .iso8601) { return date }
        return nil
    }
}

extension JSONValue {
    /// A scalar as plain text, anything else as compact JSON.
    var compactText: String {
        switch self {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .bool(let b): return String(b)
        case .null: return "null"
        default: return "\(self)"
        }
    }
}
