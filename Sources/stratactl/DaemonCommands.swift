import ArgumentParser
import Foundation
import StrataVarlink

/// Options of every command that talks to stratad.
struct DaemonOptions: ParsableArguments {
    @Option(name: .long, help: "The admin socket (default: $STRATA_ADMIN_SOCKET or /run/strata/admin.sock).")
    var socket: String?

    @Flag(name: .long, help: "Print the daemon's reply as JSON.")
    var json = false

    var socketPath: String { socket ?? ProcessInfo.processInfo.environment["STRATA_ADMIN_SOCKET"] ?? "/run/strata/admin.sock" }

    /// Where the socket path came from, for messages.
    var socketSource: String { socket != nil ? "--socket" : ProcessInfo.processInfo.environment["STRATA_ADMIN_SOCKET"] != nil ? "STRATA_ADMIN_SOCKET" : "the default" }

    /// The admin socket's path; an empty one says what happened and what to do.
    func checkedSocketPath() throws -> String {
        let path = socketPath
        guard path.isEmpty else { return path }
        throw ExitStatus.fail("""
            \(socketSource) is set but empty: no admin socket to connect to. Unset STRATA_ADMIN_SOCKET (the default is \
            /run/strata/admin.sock) or set it to the daemon's admin socket (sockets.admin.path in stratad.yaml, e.g. \
            $PWD/var/run/admin.sock for `make run`)
            """, code: ExitStatus.usage)
    }
}

/// Runs one admin call and maps failures to messages and exit codes (``ExitStatus``).
func withAdmin(_ options: DaemonOptions, _ body: (VarlinkClient.Connection) async throws -> Void) async throws {
    let path = try options.checkedSocketPath()
    do {
        try await VarlinkClient.withConnection(to: path) { try await body($0) }
    } catch let error as VarlinkClient.ClientError {
        throw ExitStatus.fail("\(error) (is stratad running? set --socket or STRATA_ADMIN_SOCKET)", code: ExitStatus.code(for: error))
    } catch let error as VarlinkError where error.name == "org.varlink.service.InterfaceNotFound" {
        // The data socket serves io.strata.Store only.
        if options.json { print(JSONValue.object(["error": .string(error.name), "parameters": .object(error.parameters)]).prettyPrinted()) }
        throw ExitStatus.fail("""
            \(path) (\(options.socketSource)) does not serve io.strata.Admin: it is not stratad's admin socket (the data \
            socket serves io.strata.Store only). Point --socket or STRATA_ADMIN_SOCKET at the admin socket \
            (sockets.admin.path in stratad.yaml, /run/strata/admin.sock when installed)
            """, code: ExitStatus.usage)
    } catch let error as VarlinkError {
        if options.json { print(JSONValue.object(["error": .string(error.name), "parameters": .object(error.parameters)]).prettyPrinted()) }
        throw ExitStatus.fail("\(error.name): \(error.reason)", code: ExitStatus.code(for: error))
    }
}

/// Runs one admin call of `method` with `parameters` and prints its reply: as JSON with `--json`
/// (``printReply(_:)``), otherwise as `text` prints it.
func callAdmin<M: VarlinkMethod>(_ options: DaemonOptions, _ method: M.Type, _ parameters: M.Parameters,
                                 text: (M.Reply) -> Void) async throws {
    try await withAdmin(options) { admin in
        let reply = try await admin.call(method, parameters)
        options.json ? printReply(reply) : text(reply)
    }
}

/// Prints a reply as JSON, every field of the interface present (`null` when absent).
func printReply<Reply: Encodable>(_ reply: Reply) {
    print(((try? JSONValueEncoder().encode(reply)) ?? .null).prettyPrinted())
}

// MARK: - status, stores, pending

struct DaemonStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show the daemon's version, uptime, stores and scheduler state.")
    @OptionGroup var options: DaemonOptions

    func run() async throws {
        try await callAdmin(options, StrataAdmin.Status.self, VarlinkEmpty()) { reply in
            print("stratad \(reply.version) (pid \(reply.pid)), up \(Int(reply.uptimeSeconds))s")
            print("status:    \(reply.status)")
            print("scheduler: \(reply.scheduler.state.rawValue) — \(reply.scheduler.reason)")
            printStores(reply.stores)
        }
    }
}

func printStores(_ stores: [StrataAdmin.StoreInfo]) {
    guard !stores.isEmpty else { return print("no stores configured") }
    let rows = stores.map { store -> [String] in
        [store.name, store.state.rawValue, store.modelVersion ?? "-", "\(store.pendingTasks)", store.path, store.error ?? ""]
    }
    let header = ["STORE", "STATE", "VERSION", "PENDING", "PATH", "ERROR"]
    let widths = (0..<header.count).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
    for row in [header] + rows {
        print(row.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }.joined(separator: "  ")
            .trimmingCharacters(in: .whitespaces))
    }
    // Cleanup waiting for clients of an older model version (stratactl clients shows them).
    for store in stores {
        if let held = store.held { print("\(store.name): \(held)") }
    }
}

struct DaemonStoresCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stores", abstract: "List the hosted stores: state, model version, pending deferred tasks.")
    @OptionGroup var options: DaemonOptions

    func run() async throws {
        try await callAdmin(options, StrataAdmin.ListStores.self, VarlinkEmpty()) { printStores($0.stores) }
    }
}

struct DaemonPendingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "pending", abstract: "Show pending deferred migration work (of one store, or all).")
    @OptionGroup var options: DaemonOptions
    @Argument(help: "A store name (default: all stores).") var store: String?

    func run() async throws {
        try await callAdmin(options, StrataAdmin.Pending.self, .init(store: store)) { reply in
            for entry in reply.stores {
                print("\(entry.store): \(entry.tasks.isEmpty ? "no deferred work pending" : "\(entry.tasks.count) task(s) pending")")
                for task in entry.tasks {
                    let percent = Int(task.fraction * 100)
                    print("  #\(task.id) \(task.kind.rawValue) \(task.summary) [\(task.state.rawValue)] \(task.rowsDone)/\(task.rowsTotal) \(task.kind == .backup ? "pages" : "rows") (\(percent)%)")
                    // Why it waits: clients of an older model version still use what it drops.
                    if let held = task.held { print("      \(held)") }
                }
            }
        }
    }
}

// MARK: - finish-deferred

struct DaemonFinishDeferredCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "finish-deferred",
        abstract: "Finish deferred migration work now (one store, or all).",
        discussion: """
            By default the work respects the idle scheduler: if it is paused (or the machine busy) \
            the command prints why and exits 0 without running anything (what \
            strata-maintenance.service relies on; --if-idle says so explicitly). --now runs it \
            regardless. Without --wait the daemon starts the work and the command returns at once; \
            with --wait it shows a progress bar and returns when the work is done or stopped; \
            when a run is already going (an earlier request, or the scheduler's turn) it follows \
            that run to its end. Ctrl-C detaches: the work goes on in the daemon, and \
            `finish-deferred --wait` follows it again.

            A run is finished once the change is complete (the schema is the new model's, the \
            old data dropped). The incremental vacuum that gives the old data's free pages back \
            to the file system is left to the scheduler's idle turns, as PostgreSQL leaves space \
            to autovacuum; --reclaim runs it in this request too.

            Tasks that would drop what clients of an older model version still use (a call at \
            that version within rollout.grace; `stratactl clients`) are held: the scheduler and \
            this command leave them, and `pending` says why. --now runs them anyway after \
            saying who loses access: it asks on a terminal, and needs --force otherwise (scripts).

            On a replicated store (replication: in the daemon's configuration) a --now run is \
            paced by the replica as the scheduler's turns are: when the next batch would take the \
            replica's lag past replication.max_lag the run waits for Litestream to catch up, then \
            goes on; the result says how long it waited. --ignore-lag goes on whatever the lag.
            """
    )
    @OptionGroup var options: DaemonOptions
    @Argument(help: "A store name (default: all stores).") var store: String?
    @Flag(name: .long, help: "Wait for the work to finish, showing progress.") var wait = false
    @Flag(name: .long, help: "Run even if the scheduler is paused or the machine busy, with the forced run's cost delay (forced_pause_between_batches: none shipped, as a manual VACUUM).") var now = false
    @Flag(name: .customLong("if-idle"), help: "Run only if the scheduler allows it (the default; for timers).") var ifIdle = false
    @Flag(name: .long, help: "Give the free pages back in this run too (the incremental vacuum), instead of in the scheduler's idle turns.") var reclaim = false
    @Flag(name: .long, help: "With --now: run tasks held for clients of an older model version without asking (they lose access to what the tasks drop).") var force = false
    @Flag(name: .customLong("ignore-lag"), help: "With --now on a replicated store: go on whatever the replica's lag (by default the run waits for it past replication.max_lag).") var ignoreLag = false

    func validate() throws {
        if now && ifIdle { throw ValidationError("--now and --if-idle contradict each other") }
        if force && !now { throw ValidationError("--force goes with --now (held tasks run only in a forced run)") }
        if ignoreLag && !now { throw ValidationError("--ignore-lag goes with --now: a run without it waits for the scheduler, which holds the work while the replica is behind") }
    }

    func run() async throws {
        var parameters = StrataAdmin.FinishDeferred.Parameters(store: store, wait: wait, now: now, reclaim: reclaim ? true : nil,
                                                               ignoreLag: ignoreLag ? true : nil)
        try await withAdmin(options) { admin in
            if now {
                // Held tasks: say who loses access, then ask (or take --force).
                let pending = try await admin.call(StrataAdmin.Pending.self, .init(store: store))
                let held = pending.stores.flatMap { entry in
                    entry.tasks.filter { $0.held?.hasPrefix("held: ") ?? false }.map { (store: entry.store, task: $0) }
                }
                if !held.isEmpty {
                    let clients = try await admin.call(StrataAdmin.Clients.self, .init(store: store)).clients.filter { $0.active && !$0.current && $0.refused == nil }
                    guard HeldConfirmation.confirm(held: held, clients: clients, force: force) else {
                        throw ExitStatus.fail("nothing was run: the held tasks wait for those clients; add --force to run them anyway", code: ExitStatus.failure)
                    }
                    parameters.force = true
                }
            }
            let bar = ProgressBar(enabled: wait && !options.json, output: .standardOutput, decilesOnly: false)
            // Ctrl-C leaves the work running in the daemon: say so, and how to get back to it.
            let detach = wait ? DetachOnInterrupt(bar: bar, store: store, now: now) : nil
            defer { detach?.cancel() }
            let reply = try await admin.callMore(StrataAdmin.FinishDeferred.self, parameters) { reply in
                guard let progress = reply.progress else { return }
                bar.update(fraction: progress.fraction, label: progress.summary,
                           prefix: "\(progress.store) task \(progress.taskIndex + 1)/\(progress.taskCount) ")
            }
            bar.finish()
            let failed = reply.results.contains { $0.error != nil }
            if options.json {
                printReply(reply)
                if failed { throw ExitStatus.failure }
                return
            }
            switch reply.state {
            case .skipped: print("skipped: \(reply.reason ?? "the scheduler does not allow work now")")
            case .started: print("started deferred work in the daemon; follow it with `stratactl pending`")
            default:
                for result in reply.results {
                    if let error = result.error {
                        print("\(result.store): failed: \(error) (\(result.tasksFinished) task(s) finished, \(result.tasksRemaining) task(s) remaining)")
                        continue
                    }
                    var line = "\(result.store): \(result.tasksFinished) task(s) finished, \(result.tasksRemaining) remaining, \(result.rowsProcessed) rows in \(String(format: "%.2f", result.seconds))s\(result.stoppedEarly ? " (stopped early)" : "")"
                    if result.reclaimLeft == true {
                        let pages = result.freePages.map { "its \($0) free pages" } ?? "its free pages"
                        line += " (the change is complete; \(pages) go back to the file system when the store is idle, or now with --reclaim)"
                    }
                    print(line)
                    if let lag = result.replicaLag { print("\(result.store): replica: \(lag)") }
                }
                if failed { throw ExitStatus.failure }
            }
        }
    }
}

// MARK: - scheduler

struct DaemonPauseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "pause", abstract: "Pause the idle scheduler; running idle-respecting work stops at its next batch.")
    @OptionGroup var options: DaemonOptions
    @Option(name: .long, help: "Why (shown in status).") var reason: String?

    func run() async throws {
        try await callAdmin(options, StrataAdmin.Pause.self, .init(reason: reason)) { print("scheduler: \($0.scheduler.reason)") }
    }
}

struct DaemonResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "resume", abstract: "Resume the idle scheduler.")
    @OptionGroup var options: DaemonOptions

    func run() async throws {
        try await callAdmin(options, StrataAdmin.Resume.self, VarlinkEmpty()) { print("scheduler: \($0.scheduler.reason)") }
    }
}

struct DaemonGetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "get", abstract: "Show scheduler settings (gh-ost's key=?): one KEY, or all.")
    @OptionGroup var options: DaemonOptions
    @Argument(help: "A setting (e.g. idle_after); default: all.") var key: String?

    func run() async throws {
        try await callAdmin(options, StrataAdmin.GetSettings.self, .init(key: key)) { reply in
            for setting in reply.settings {
                print("\(setting.key)=\(setting.value)    # \(setting.description)")
            }
        }
    }
}

struct DaemonSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "set", abstract: "Change a scheduler setting at run time (gh-ost's key=value).")
    @OptionGroup var options: DaemonOptions
    @Argument(help: "KEY=VALUE, e.g. idle_after=30s.") var assignment: String

    func validate() throws {
        guard assignment.contains("="), !assignment.hasPrefix("=") else { throw ValidationError("expected KEY=VALUE, e.g. idle_after=30s") }
    }

    func run() async throws {
        let key = String(assignment[..<assignment.firstIndex(of: "=")!])
        let value = String(assignment[assignment.index(after: assignment.firstIndex(of: "=")!)...])
        try await callAdmin(options, StrataAdmin.SetSetting.self, .init(key: key, value: value)) {
            print("\(key)=\($0.setting.value) (was \($0.previous))")
        }
    }
}

// MARK: - checkpoint, backup, reload

struct DaemonCheckpointCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "checkpoint", abstract: "Checkpoint a store's WAL into its main file.")
    @OptionGroup var options: DaemonOptions
    @Argument(help: "The store.") var store: String

    func run() async throws {
        try await callAdmin(options, StrataAdmin.Checkpoint.self, .init(store: store)) { _ in print("\(store): checkpointed") }
    }
}

struct DaemonBackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "backup", abstract: "Write a consistent copy of a store to PATH (written by the daemon; must not exist).")
    @OptionGroup var options: DaemonOptions
    @Argument(help: "The store.") var store: String
    @Argument(help: "The destination file.") var path: String

    func run() async throws {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        try await callAdmin(options, StrataAdmin.Backup.self, .init(store: store, path: absolute)) {
            print("\(store): backed up to \(absolute) (\($0.bytes) bytes)")
        }
    }
}

struct DaemonReloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "reload", abstract: "Make the daemon re-read its configuration (like SIGHUP).")
    @OptionGroup var options: DaemonOptions

    func run() async throws {
        try await callAdmin(options, StrataAdmin.Reload.self, VarlinkEmpty()) { print("reloaded: \($0.status)") }
    }
}

// MARK: - metrics

struct DaemonMetricsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metrics",
        abstract: "Print the daemon's metrics in the Prometheus text format.",
        discussion: """
            Requests by method and outcome, request durations, each store's requests, pending \
            deferred tasks and calls in flight, open connections per socket, and what the idle \
            scheduler did (rows, batches, pauses and their latency). The same text the daemon \
            writes to metrics.textfile for node_exporter's textfile collector. With --json: \
            {"text": "..."}.
            """
    )
    @OptionGroup var options: DaemonOptions

    func run() async throws {
        try await callAdmin(options, StrataAdmin.Metrics.self, VarlinkEmpty()) {
            print($0.text, terminator: $0.text.hasSuffix("\n") ? "" : "\n")
        }
    }
}
