import ArgumentParser
import Foundation
import StrataVarlink

/// `stratactl clients [STORE] [--json]`: the data socket's clients by store and model version.
struct DaemonClientsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clients",
        abstract: "Show the data socket's clients by store and model version (who still runs an older release).",
        discussion: """
            One line per store, model version and connection: the version its calls were \
            served at — the version a call names (Store methods' `version`, the Python \
            examples' and `watch`'s --version), or the store's own when it names none — the \
            peer's user and pid, the number of calls and the last one. ACTIVE: a call came \
            within rollout.grace (`stratactl get rollout.grace`, 10m by default). While clients \
            of an older version are active, the deferred cleanup that would drop what that \
            version still uses (its removed attributes' columns, its removed entities' \
            tables) is held: `stratactl pending` says which task and why, and the idle \
            scheduler leaves it. When the last of them goes quiet the journal says so and \
            the cleanup runs. `finish-deferred --now` runs it earlier, after saying who loses \
            access (--force in scripts).

            VERSION is marked "(current)" for the store's own version, "(refused)" when \
            calls at it are refused (NOTE says why: a newer version than the store's, a hop \
            that cannot be served, what the cleanup already dropped). Connections that \
            closed are listed until they go quiet for a day. See docs/Rollout.md.

            Examples:
              stratactl clients
              stratactl clients fleet --json
            """
    )
    @OptionGroup var options: DaemonOptions
    @Argument(help: "A store name (default: all stores).") var store: String?

    func run() async throws {
        try await callAdmin(options, StrataAdmin.Clients.self, .init(store: store)) { reply in
            print(ClientsTable.render(reply))
        }
    }
}

/// The text of `stratactl clients` (and of the clients `finish-deferred --now` names).
enum ClientsTable {
    static func render(_ reply: StrataAdmin.Clients.Reply) -> String {
        guard !reply.clients.isEmpty else { return "no client calls recorded (rollout.grace \(reply.grace))" }
        let header = ["STORE", "VERSION", "CONN", "PEER", "CALLS", "LAST CALL", "ACTIVE", "NOTE"]
        let rows = reply.clients.map { client -> [String] in
            var version = client.version
            if client.current { version += " (current)" } else if client.refused != nil { version += " (refused)" }
            if !client.named && !client.current { version += " (unnamed)" }
            return [client.store, version, "\(client.connection)\(client.open ? "" : " closed")", peer(client), "\(client.calls)",
                    ago(client.lastCallSecondsAgo), client.active ? "yes" : "no", client.refused ?? ""]
        }
        var table = TextTable(headers: header)
        table.maxCellWidth = 100
        table.rightAligned = [2, 4]
        for row in rows { table.append(row) }
        return table.render() + "\nactive: a call within rollout.grace (\(reply.grace))"
    }

    /// `app (uid 1000) pid 4242`.
    static func peer(_ client: StrataAdmin.ClientInfo) -> String {
        guard let pid = client.pid else { return "-" }
        let user = client.user ?? client.uid.map { "uid \($0)" } ?? "?"
        return "\(user) pid \(pid)"
    }

    static func ago(_ seconds: Double) -> String {
        let s = max(0, Int(seconds.rounded()))
        if s < 120 { return "\(s) s ago" }
        if s < 7200 { return "\(s / 60) min ago" }
        return "\(s / 3600) h ago"
    }
}

/// Asks before a forced run drops what clients of an older model version still use.
enum HeldConfirmation {
    /// Prints the held tasks and who loses access; true to go ahead: `force`, or a "y" on a
    /// terminal. Without a terminal and without `force`, false.
    static func confirm(held: [(store: String, task: StrataAdmin.DeferredTaskInfo)], clients: [StrataAdmin.ClientInfo], force: Bool) -> Bool {
        var lines = ["\(held.count) deferred task\(held.count == 1 ? " is" : "s are") held for clients of an older model version:"]
        for (store, task) in held {
            lines.append("  \(store) #\(task.id) \(task.summary)")
            if let why = task.held { lines.append("      \(why)") }
        }
        lines.append("running \(held.count == 1 ? "it" : "them") now takes away what these clients still use (their calls are refused afterwards):")
        lines += clients.map { "  \($0.store) \($0.version): \(ClientsTable.peer($0)), \($0.calls) call\($0.calls == 1 ? "" : "s"), last \(ClientsTable.ago($0.lastCallSecondsAgo))" }
        FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        if force { return true }
        guard isatty(STDIN_FILENO) == 1 else { return false }
        FileHandle.standardError.write(Data("run them anyway? [y/N] ".utf8))
        let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
        return answer == "y" || answer == "yes"
    }
}
