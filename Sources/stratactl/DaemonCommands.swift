import ArgumentParser
import Foundation
import StrataDaemon

/// Options of every command that talks to stratad.
struct DaemonOptions: ParsableArguments {
    @Option(name: .long, help: "The admin socket (default: $STRATA_ADMIN_SOCKET or /run/strata/admin.sock).")
    var socket: String?

    @Flag(name: .long, help: "Print the daemon's reply as JSON.")
    var json = false

    var socketPath: String { socket ?? ProcessInfo.processInfo.environment["STRATA_ADMIN_SOCKET"] ?? "/run/strata/admin.sock" }
}

/// Exit codes of the daemon commands (documented in docs/Daemon.md).
enum DaemonExit {
    static let failure: Int32 = 1
    static let unreachable: Int32 = 4
    static let notAuthorized: Int32 = 5
    static let notFound: Int32 = 6
    static let invalid: Int32 = 7
}

/// Runs one admin call and maps failures to messages and exit codes.
func withAdmin(_ options: DaemonOptions, _ body: (VarlinkClient.Connection) async throws -> Void) async throws {
    do {
        try await VarlinkClient.withConnection(to: options.socketPath) { try await body($0) }
    } catch let error as VarlinkClient.ClientError {
        fail("\(error) (is stratad running? set --socket or STRATA_ADMIN_SOCKET)", code: DaemonExit.unreachable)
    } catch let error as VarlinkError {
        if options.json { print(JSONValue.object(["error": .string(error.name), "parameters": .object(error.parameters)]).prettyPrinted()) }
        let code: Int32 = switch error.name.split(separator: ".").last ?? "" {
        case "NotAuthorized", "PermissionDenied": DaemonExit.notAuthorized
        case "NoSuchStore", "UnknownSetting": DaemonExit.notFound
        case "InvalidSetting", "InvalidParameter": DaemonExit.invalid
        default: DaemonExit.failure
        }
        fail("\(error.name): \(error.reason)", code: code)
    }
}

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("stratactl: \(message)\n".utf8))
    exit(code)
}

func printJSON(_ parameters: [String: JSONValue]) {
    print(JSONValue.object(parameters).prettyPrinted())
}

// MARK: - status, stores, pending

struct DaemonStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show the daemon's version, uptime, stores and scheduler state.")
    @OptionGroup var options: DaemonOptions

    func run() async throws {
        try await withAdmin(options) { admin in
            let reply = try await admin.call("io.strata.Admin.Status")
            if options.json { return printJSON(reply) }
            print("stratad \(reply["version"]?.stringValue ?? "?") (pid \(reply["pid"]?.intValue ?? 0)), up \(Int(reply["uptimeSeconds"]?.doubleValue ?? 0))s")
            print("status:    \(reply["status"]?.stringValue ?? "")")
            if let scheduler = reply["scheduler"] {
                print("scheduler: \(scheduler["state"]?.stringValue ?? "?") — \(scheduler["reason"]?.stringValue ?? "")")
            }
            printStores(reply["stores"]?.arrayValue ?? [])
        }
    }
}

func printStores(_ stores: [JSONValue]) {
    guard !stores.isEmpty else { return print("no stores configured") }
    let rows = stores.map { store -> [String] in
        [store["name"]?.stringValue ?? "", store["state"]?.stringValue ?? "", store["modelVersion"]?.stringValue ?? "-",
         "\(store["pendingTasks"]?.intValue ?? 0)", store["path"]?.stringValue ?? "", store["error"]?.stringValue ?? ""]
    }
    let header = ["STORE", "STATE", "VERSION", "PENDING", "PATH", "ERROR"]
    let widths = (0..<header.count).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
    for row in [header] + rows {
        print(row.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }.joined(separator: "  ")
            .trimmingCharacters(in: .whitespaces))
    }
}

struct DaemonStoresCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stores", abstract: "List the hosted stores: state, model version, pending deferred tasks.")
    @OptionGroup var options: DaemonOptions

    func run() async throws {
        try await withAdmin(options) { admin in
            let reply = try await admin.call("io.strata.Admin.ListStores")
            options.json ? printJSON(reply) : printStores(reply["stores"]?.arrayValue ?? [])
        }
    }
}

struct DaemonPendingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "pending", abstract: "Show pending deferred migration work (of one store, or all).")
    @OptionGroup var options: DaemonOptions
    @Argument(help: "A store name (default: all stores).") var store: String?

    func run() async throws {
        try await withAdmin(options) { admin in
            let reply = try await admin.call("io.strata.Admin.Pending", store.map { ["store": .string($0)] } ?? [:])
            if options.json { return printJSON(reply) }
            for entry in reply["stores"]?.arrayValue ?? [] {
                let tasks = entry["tasks"]?.arrayValue ?? []
                print("\(entry["store"]?.stringValue ?? ""): \(tasks.isEmpty ? "no deferred work pending" : "\(tasks.count) task(s) pending")")
                for task in tasks {
                    let percent = Int((task["fraction"]?.doubleValue ?? 0) * 100)
                    print("  #\(task["id"]?.intValue ?? 0) \(task["kind"]?.stringValue ?? "") \(task["summary"]?.stringValue ?? "") [\(task["state"]?.stringValue ?? "")] \(task["rowsDone"]?.intValue ?? 0)/\(task["rowsTotal"]?.intValue ?? 0) rows (\(percent)%)")
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
            with --wait it shows a progress bar and returns when the work is done or stopped.
            """
    )
    @OptionGroup var options: DaemonOptions
    @Argument(help: "A store name (default: all stores).") var store: String?
    @Flag(name: .long, help: "Wait for the work to finish, showing progress.") var wait = false
    @Flag(name: .long, help: "Run even if the scheduler is paused or the machine busy.") var now = false
    @Flag(name: .customLong("if-idle"), help: "Run only if the scheduler allows it (the default; for timers).") var ifIdle = false

    func validate() throws {
        if now && ifIdle { throw ValidationError("--now and --if-idle contradict each other") }
    }

    func run() async throws {
        var parameters: [String: JSONValue] = ["wait": .bool(wait), "now": .bool(now)]
        if let store { parameters["store"] = .string(store) }
        try await withAdmin(options) { admin in
            let interactive = isatty(1) == 1 && !options.json
            let reply = try await admin.callMore("io.strata.Admin.FinishDeferred", parameters) { reply in
                guard wait, !options.json, let progress = reply["progress"] else { return }
                let fraction = progress["fraction"]?.doubleValue ?? 0
                let width = 30
                let filled = Int(fraction * Double(width))
                let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
                let line = "\(progress["store"]?.stringValue ?? "") task \((progress["taskIndex"]?.intValue ?? 0) + 1)/\(progress["taskCount"]?.intValue ?? 0) [\(bar)] \(Int(fraction * 100))% \(progress["summary"]?.stringValue ?? "")"
                // On a terminal the bar redraws its line (erasing the rest of a longer previous one).
                if interactive { FileHandle.standardOutput.write(Data("\r\(line)\u{1B}[K".utf8)) } else { print(line) }
            }
            if interactive && wait { print("") }
            let failed = (reply["results"]?.arrayValue ?? []).contains { $0["error"]?.stringValue != nil }
            if options.json {
                printJSON(reply)
                if failed { throw ExitCode(DaemonExit.failure) }
                return
            }
            let state = reply["state"]?.stringValue ?? "?"
            switch state {
            case "skipped": print("skipped: \(reply["reason"]?.stringValue ?? "the scheduler does not allow work now")")
            case "started": print("started deferred work in the daemon; follow it with `stratactl pending`")
            default:
                for result in reply["results"]?.arrayValue ?? [] {
                    if let error = result["error"]?.stringValue {
                        print("\(result["store"]?.stringValue ?? ""): failed: \(error) (\(result["tasksFinished"]?.intValue ?? 0) task(s) finished, \(result["tasksRemaining"]?.intValue ?? 0) task(s) remaining)")
                        continue
                    }
                    print("\(result["store"]?.stringValue ?? ""): \(result["tasksFinished"]?.intValue ?? 0) task(s) finished, \(result["tasksRemaining"]?.intValue ?? 0) remaining, \(result["rowsProcessed"]?.intValue ?? 0) rows in \(String(format: "%.2f", result["seconds"]?.doubleValue ?? 0))s\(result["stoppedEarly"]?.boolValue == true ? " (stopped early)" : "")")
                }
                if failed { throw ExitCode(DaemonExit.failure) }
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
        try await withAdmin(options) { admin in
            let reply = try await admin.call("io.strata.Admin.Pause", reason.map { ["reason": .string($0)] } ?? [:])
            options.json ? printJSON(reply) : print("scheduler: \(reply["scheduler"]?["reason"]?.stringValue ?? "paused")")
        }
    }
}

struct DaemonResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "resume", abstract: "Resume the idle scheduler.")
    @OptionGroup var options: DaemonOptions

    func run() async throws {
        try await withAdmin(options) { admin in
            let reply = try await admin.call("io.strata.Admin.Resume")
            options.json ? printJSON(reply) : print("scheduler: \(reply["scheduler"]?["reason"]?.stringValue ?? "resumed")")
        }
    }
}

struct DaemonGetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "get", abstract: "Show scheduler settings (gh-ost's key=?): one KEY, or all.")
    @OptionGroup var options: DaemonOptions
    @Argument(help: "A setting (e.g. idle_after); default: all.") var key: String?

    func run() async throws {
        try await withAdmin(options) { admin in
            let reply = try await admin.call("io.strata.Admin.GetSettings", key.map { ["key": .string($0)] } ?? [:])
            if options.json { return printJSON(reply) }
            for setting in reply["settings"]?.arrayValue ?? [] {
                print("\(setting["key"]?.stringValue ?? "")=\(setting["value"]?.stringValue ?? "")    # \(setting["description"]?.stringValue ?? "")")
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
        try await withAdmin(options) { admin in
            let reply = try await admin.call("io.strata.Admin.SetSetting", ["key": .string(key), "value": .string(value)])
            options.json ? printJSON(reply) : print("\(key)=\(reply["setting"]?["value"]?.stringValue ?? value) (was \(reply["previous"]?.stringValue ?? "?"))")
        }
    }
}

// MARK: - checkpoint, backup, reload

struct DaemonCheckpointCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "checkpoint", abstract: "Checkpoint a store's WAL into its main file.")
    @OptionGroup var options: DaemonOptions
    @Argument(help: "The store.") var store: String

    func run() async throws {
        try await withAdmin(options) { admin in
            let reply = try await admin.call("io.strata.Admin.Checkpoint", ["store": .string(store)])
            options.json ? printJSON(reply) : print("\(store): checkpointed")
        }
    }
}

struct DaemonBackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "backup", abstract: "Write a consistent copy of a store to PATH (written by the daemon; must not exist).")
    @OptionGroup var options: DaemonOptions
    @Argument(help: "The store.") var store: String
    @Argument(help: "The destination file.") var path: String

    func run() async throws {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        try await withAdmin(options) { admin in
            let reply = try await admin.call("io.strata.Admin.Backup", ["store": .string(store), "path": .string(absolute)])
            options.json ? printJSON(reply) : print("\(store): backed up to \(absolute) (\(reply["bytes"]?.intValue ?? 0) bytes)")
        }
    }
}

struct DaemonReloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "reload", abstract: "Make the daemon re-read its configuration (like SIGHUP).")
    @OptionGroup var options: DaemonOptions

    func run() async throws {
        try await withAdmin(options) { admin in
            let reply = try await admin.call("io.strata.Admin.Reload")
            options.json ? printJSON(reply) : print("reloaded: \(reply["status"]?.stringValue ?? "")")
        }
    }
}
