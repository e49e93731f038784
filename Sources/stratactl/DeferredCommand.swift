import ArgumentParser
import Foundation
import Strata

/// `stratactl deferred …`: a store file's deferred ledger, offline (without the daemon).
struct DeferredCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deferred",
        abstract: "List or finish a store file's deferred migration work, without the daemon.",
        discussion: """
            A store opened with deferred cleanup keeps the expensive part of its migrations \
            (dropping columns and tables, building indexes, reclaiming pages) in a ledger in its \
            own metadata. `list` reads it without writing; `finish` runs it online, in small \
            batches, while other processes keep using the store. When stratad serves the store, \
            prefer `stratactl finish-deferred`, which lets the daemon's scheduler do it.
            """,
        subcommands: [List.self, Finish.self]
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List pending deferred tasks (read-only).")
        @Argument(help: "The store file.") var store: String
        @OptionGroup var output: OutputOptions

        func run() throws {
            let tasks: [DeferredTask]
            do { tasks = try PersistentStore.pendingDeferredWork(at: URL(fileURLWithPath: store)) } catch { throw ExitStatus.fail(error) }
            if output.json {
                try printJSON(tasks.map(\.jsonObject))
                return
            }
            if tasks.isEmpty {
                print("\(store): no deferred work pending")
                return
            }
            print("\(store): \(tasks.count) deferred task(s) pending")
            for task in tasks {
                // (Rows clients insert during a copy count too: the total shown grows with them, as in `pending`.)
                let progress = task.rowsTotal > 0 ? " [\(task.rowsDone)/\(max(task.rowsTotal, task.rowsDone)) \(task.kind == .backup ? "pages" : "rows")]" : ""
                print("  #\(task.id) \(task.state.rawValue.uppercased()) \(task.summary)\(progress)")
            }
        }
    }

    struct Finish: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Finish pending deferred tasks online (batched, resumable).",
            discussion: "Interrupting (Ctrl-C, kill) is safe: progress is kept in the ledger and the next run resumes.")
        @Argument(help: "The store file.") var store: String
        @Option(name: .customLong("batch-ms"), help: "Time budget of one batch, in milliseconds (1 to 60000).") var batchMilliseconds = 20
        @Option(name: .customLong("pause-ms"), help: "Pause after each batch, in milliseconds (0 to 60000).") var pauseMilliseconds = 0
        @Option(name: .customLong("idle-batch-ms"), help: ArgumentHelp(
            "Batch budget while no other process writes the store, in milliseconds (0: off, up to 10000).",
            discussion: "For a store nothing else is using (its service stopped): batches may take this long, and an added index is built at once by SQLite's CREATE INDEX (up to 8 times this). Other processes' commits are watched for between batches; after one, batches keep to --batch-ms for a while, but that process's first write may wait for the batch in flight."))
        var idleBatchMilliseconds = 0
        @Flag(name: .customLong("one"), help: "Finish only the next task.") var onlyOne = false
        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard (1...60_000).contains(batchMilliseconds) else { throw ValidationError("--batch-ms must be between 1 and 60000 (got \(batchMilliseconds))") }
            guard (0...60_000).contains(pauseMilliseconds) else { throw ValidationError("--pause-ms must be between 0 and 60000 (got \(pauseMilliseconds))") }
            guard (0...10_000).contains(idleBatchMilliseconds) else { throw ValidationError("--idle-batch-ms must be between 0 and 10000 (got \(idleBatchMilliseconds))") }
        }

        func run() async throws {
            let url = URL(fileURLWithPath: store)
            let store: PersistentStore
            do {
                let metadata = try PersistentStore.metadata(at: url)
                store = try PersistentStore.open(at: url, model: metadata.model, options: StoreOptions(createIfMissing: false))
            } catch { throw ExitStatus.fail(error) }
            let bar = ProgressBar(enabled: !output.json)
            var options = FinishOptions(batchBudget: .milliseconds(batchMilliseconds), pauseBetweenBatches: .milliseconds(pauseMilliseconds),
                                        maxTasks: onlyOne ? 1 : nil)
            if idleBatchMilliseconds > batchMilliseconds {
                // Nobody calls through this process: every batch may be idle, unless another
                // process's commit was seen (the finisher looks before each batch).
                options.clientsActive = { false }
                options.idleBatchBudget = .milliseconds(idleBatchMilliseconds)
            }
            let report: FinishReport
            do {
                report = try await store.finishDeferredMigration(options) { progress in
                    bar.update(fraction: progress.task.fraction, label: "task \(progress.taskIndex + 1)/\(progress.taskCount): \(progress.task.summary)")
                }
            } catch { bar.finish(); throw ExitStatus.fail(error) }
            bar.finish()
            if output.json {
                try printJSON(["tasksFinished": report.tasksFinished, "tasksRemaining": report.tasksRemaining, "rowsProcessed": report.rowsProcessed,
                               "batches": report.batches, "idleBatches": report.idleBatches, "seconds": report.seconds, "stoppedEarly": report.stoppedEarly])
            } else {
                print("finished \(report.tasksFinished) task(s), \(report.rowsProcessed) rows in \(report.batches) batches, \(String(format: "%.2f", report.seconds)) s; \(report.tasksRemaining) remaining")
            }
        }
    }
}

extension DeferredTask {
    var jsonObject: [String: Any] {
        ["id": id, "kind": kind.rawValue, "table": table as Any? ?? NSNull(), "summary": summary, "state": state.rawValue,
         "rowsDone": rowsDone, "rowsTotal": rowsTotal, "createdAt": ISO8601DateFormatter().string(from: createdAt)]
    }
}
