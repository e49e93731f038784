import ArgumentParser
import Foundation
import Strata

/// `stratactl inspect STORE`: what a store file holds, read-only.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show a store's metadata, entities, row counts and file statistics (read-only).",
        discussion: """
            Prints the store identifier, the model version and checksum the store was written \
            with, when it was created, its migration history, the pending deferred migration \
            tasks, every entity with its table and object count, every table with its row \
            count, and file statistics (size, WAL size, page size and count, free pages, \
            journal and auto-vacuum modes).

            --check also runs SQLite's integrity_check and foreign_key_check (read-only), \
            checks that both sides of every one-to-one relationship agree, and exits 1 when \
            any of them finds a problem.

            The store is opened read-only with the model embedded in it: inspect never writes \
            to the store and needs no model files.

            Examples:
              stratactl inspect var/aircraft.sqlite
              stratactl inspect --check --json var/aircraft.sqlite
            """
    )

    @OptionGroup var output: OutputOptions

    @Flag(name: .long, help: "Run PRAGMA integrity_check and foreign_key_check and check one-to-one inverses; exit 1 on problems.")
    var check = false

    @Argument(help: "The store file.", completion: .file())
    var store: String

    func run() throws {
        let report = try ExitStatus.reporting { try StoreReport.build(path: store, check: check) }
        if output.json {
            try JSONOutput.print(report)
        } else {
            print(report.text)
        }
        if let integrity = report.integrity, !integrity.ok { throw ExitStatus.failure }
    }
}

// MARK: - Report

/// Everything `inspect` shows; encoded as-is for `--json`.
struct StoreReport: Encodable {
    struct Entity: Encodable {
        var name: String
        var table: String
        var parent: String?
        var isAbstract: Bool
        /// nil when counting failed (reported as an integrity problem under `--check`).
        var objects: Int?
    }
    struct Table: Encodable {
        var name: String
        var rows: Int?
    }
    struct History: Encodable {
        var at: Date
        var kind: String
        var fromVersion: String?
        var toVersion: String
        var toChecksum: String
        var detail: String
    }
    struct Deferred: Encodable {
        var id: Int64
        var kind: String
        var state: String
        var summary: String
        var progress: String?
        var createdAt: Date
    }
    struct FileStatistics: Encodable {
        var bytes: Int
        var walBytes: Int
        var pageSize: Int
        var pageCount: Int
        var freelistCount: Int
        var journalMode: String
        var autoVacuum: String

        init(_ statistics: StoreFileStatistics) {
            (bytes, walBytes, pageSize, pageCount) = (statistics.bytes, statistics.walBytes, statistics.pageSize, statistics.pageCount)
            (freelistCount, journalMode, autoVacuum) = (statistics.freelistCount, statistics.journalMode, statistics.autoVacuum)
        }
    }
    struct Integrity: Encodable {
        var ok: Bool
        var problems: [String]

        init(problems: [String]) { (ok, self.problems) = (problems.isEmpty, problems) }
    }

    var path: String
    var storeIdentifier: String
    var formatVersion: Int
    var modelVersion: String
    var modelChecksum: String
    var createdAt: Date
    var history: [History]
    var deferred: [Deferred]
    var entities: [Entity]
    var tables: [Table]
    var file: FileStatistics
    var integrity: Integrity?

    static func build(path: String, check: Bool) throws -> StoreReport {
        let offline = try OfflineStore(path: path)
        defer { offline.close() }
        let metadata = offline.metadata
        let context = ObjectContext(store: offline.store)
        // With --check, a count that fails (a damaged table or index) becomes a problem in the
        // report instead of ending the command, so that integrity_check still runs.
        var countProblems: [String] = []
        func counted(_ what: String, _ body: () throws -> Int) throws -> Int? {
            do {
                return try body()
            } catch {
                guard check else { throw error }
                countProblems.append("counting \(what) failed: \(error)")
                return nil
            }
        }
        var entities: [Entity] = []
        for entity in offline.model.entities {
            let table = offline.layout.entity(entity.name)?.table ?? entity.name
            let objects = try counted("entity \(entity.name)") { try context.count(FetchRequest(entityName: entity.name)) }
            entities.append(Entity(name: entity.name, table: table, parent: entity.parent, isAbstract: entity.isAbstract, objects: objects))
        }
        var tables: [Table] = []
        for name in offline.layout.allTableNames {
            let rows = try counted("table \(name)") { try offline.store.rowCount(ofTable: name) }
            tables.append(Table(name: name, rows: rows))
        }
        let statistics = FileStatistics(try offline.store.fileStatistics())
        let integrity = check ? Integrity(problems: countProblems + offline.store.integrityProblems()) : nil
        return StoreReport(
            path: path, storeIdentifier: metadata.storeIdentifier, formatVersion: metadata.formatVersion,
            modelVersion: metadata.modelVersion, modelChecksum: metadata.modelChecksum, createdAt: metadata.createdAt,
            history: metadata.history.map {
                History(at: $0.at, kind: $0.kind, fromVersion: $0.fromVersion, toVersion: $0.toVersion, toChecksum: $0.toChecksum, detail: $0.detail)
            },
            deferred: metadata.deferred.map {
                Deferred(id: $0.id, kind: $0.kind.rawValue, state: $0.state.rawValue, summary: $0.summary,
                         progress: $0.rowsTotal > 0 ? "\($0.rowsDone)/\(max($0.rowsTotal, $0.rowsDone)) rows" : nil, createdAt: $0.createdAt)
            },
            entities: entities, tables: tables, file: statistics, integrity: integrity)
    }

    // MARK: - Text

    var text: String {
        var lines: [String] = []
        var summary = TextTable(headers: ["Store", path])
        summary.append(["Identifier", storeIdentifier])
        summary.append(["Model", "\(modelVersion) (checksum \(modelChecksum))"])
        summary.append(["Created", JSONOutput.isoString(createdAt)])
        summary.append(["Format", String(formatVersion)])
        summary.maxCellWidth = 200
        lines.append(summary.render())

        lines.append("")
        lines.append("Migration history:")
        var history = TextTable(headers: ["AT", "KIND", "FROM", "TO", "DETAIL"], indent: "  ")
        for entry in self.history {
            history.append([JSONOutput.isoString(entry.at), entry.kind, entry.fromVersion ?? "-", entry.toVersion, entry.detail])
        }
        lines.append(history.render())

        lines.append("")
        if deferred.isEmpty {
            lines.append("Deferred migration work: none pending")
        } else {
            lines.append("Deferred migration work: \(deferred.count) task\(deferred.count == 1 ? "" : "s") pending")
            var tasks = TextTable(headers: ["ID", "KIND", "STATE", "SUMMARY", "PROGRESS"], indent: "  ")
            tasks.rightAligned = [0]
            for task in deferred { tasks.append([String(task.id), task.kind, task.state, task.summary, task.progress ?? "-"]) }
            lines.append(tasks.render())
        }

        lines.append("")
        lines.append("Entities:")
        var entityTable = TextTable(headers: ["ENTITY", "TABLE", "OBJECTS"], indent: "  ")
        entityTable.rightAligned = [2]
        for entity in entities {
            var name = entity.name
            if let parent = entity.parent { name += " : \(parent)" }
            if entity.isAbstract { name += " (abstract)" }
            entityTable.append([name, entity.table, entity.objects.map(String.init) ?? "?"])
        }
        lines.append(entityTable.render())

        lines.append("")
        lines.append("Tables:")
        var tableTable = TextTable(headers: ["TABLE", "ROWS"], indent: "  ")
        tableTable.rightAligned = [1]
        for table in tables { tableTable.append([table.name, table.rows.map(String.init) ?? "?"]) }
        lines.append(tableTable.render())

        lines.append("")
        lines.append("File:")
        var fileTable = TextTable(headers: ["Size", "\(file.bytes) bytes (WAL \(file.walBytes) bytes)"], indent: "  ")
        fileTable.append(["Page size", "\(file.pageSize) bytes"])
        fileTable.append(["Pages", String(file.pageCount)])
        fileTable.append(["Free pages", String(file.freelistCount)])
        fileTable.append(["Journal mode", file.journalMode])
        fileTable.append(["Auto-vacuum", file.autoVacuum])
        lines.append(fileTable.render())

        if let integrity {
            lines.append("")
            if integrity.ok {
                lines.append("Integrity: ok")
            } else {
                lines.append("Integrity: \(integrity.problems.count) problem\(integrity.problems.count == 1 ? "" : "s") found")
                lines += integrity.problems.flatMap { $0.split(separator: "\n") }.map { "  \($0.trimmingCharacters(in: .whitespaces))" }
            }
        }
        return lines.joined(separator: "\n")
    }
}
