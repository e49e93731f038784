import Foundation
import GRDB
import StrataUnits

extension DeferredFinisher {
    // MARK: - Standalone index build

    /// Builds an index added by a model change (its table is not rewritten): see
    /// ``buildIndex(_:on:as:state:step:adopted:)``.
    func runIndexBuild(_ step: TaskStep, _ spec: IndexSpec) async throws -> Bool {
        guard let index = store.layout.indexes.first(where: { $0.name == spec.name && $0.table == spec.table }), try tableExists(spec.table),
              try indexTable(spec.name) == nil else {
            try batch(step.session) { db in try DeferredLedger.complete(id: step.id, in: db) }
            report(step.entry, rowsDone: 0, state: .done, index: step.index, of: step.total)
            return true
        }
        var state = step.entry.progress
        let built = try await buildIndex(index, on: spec.table, as: spec.name, state: &state, step: step) { _, db in
            try DeferredLedger.complete(id: step.id, in: db)
        }
        if built {
            report(step.entry, rowsDone: max(state.rowsDone, step.entry.payload.rowsTotal), state: .done, index: step.index, of: step.total)
        }
        return built
    }

    /// Whether `query` returns a row (on a reader connection: no lock).
    private func exists(_ query: String) throws -> Bool {
        try store.database.read { db in try Bool.fetchOne(db, sql: "SELECT EXISTS (\(query))") ?? true }
    }

    private func tableExists(_ table: String) throws -> Bool { try store.database.read { db in try db.tableExists(table) } }
    private func indexTable(_ name: String) throws -> String? { try store.database.read { db in try IndexRelocation.indexTable(name, in: db) } }

    // MARK: - Building an index in bounded steps

    /// Builds `index` (a layout index) on `table` — the live table, or a rewrite's shadow —
    /// under the name `name`, in bounded steps, while writers keep writing (from any process).
    ///
    /// **Sorted build.** Triggers on the table record every changed rowid (`changes`), the
    /// rowids whose key is NULL (`nulls`), and keep a `WITHOUT ROWID` container table (the key
    /// columns, then the rowid: exactly an index's entries) current for changed rows. The
    /// table's entries are sorted into runs in an ``IndexSortBuffer`` (reads only: no lock
    /// held), a run of rows at a time, and the runs merged into the container in key order, a
    /// batch at a time (``SortedRunMerge``; rows changed meanwhile are the triggers'), every
    /// step recorded in the ledger; a last short transaction turns the container into the index
    /// (``IndexRelocation``). With a `source` — an index of the live table with the same key
    /// columns, for a rewrite's shadow, which keeps the live table's rowids and values — the
    /// entries are read from it, already in order, instead of being collected and sorted.
    ///
    /// **Fallback.** A primary key cannot hold NULL, so when a key is NULL the index is built
    /// on a side table instead, maintained row by row while the side table is filled in rowid
    /// order — bounded too, but each batch rewrites index pages all over the index.
    ///
    /// `adopted` runs in the transaction that gives the index its place. Returns false when
    /// stopped before the end (the state is in the task's progress).
    func buildIndex(_ index: IndexLayout, on table: String, as name: String, source: (table: String, index: String)? = nil,
                    state: inout DeferredLedger.Progress, step: TaskStep,
                    adopted: @escaping (inout DeferredLedger.Progress, Database) throws -> Void) async throws -> Bool {
        if state.build?.index != index.name || state.build?.table != table {
            if try await buildIndexAtOnce(index, on: table, as: name, state: &state, step: step, adopted: adopted) { return true }
            state = try beginSortedBuild(index, on: table, as: name, source: source, state: state, step: step)
        }
        if state.build?.phase == .sorted, state.build?.sourceIndex != nil {
            guard let finished = try await runStreamedBuild(index, state: &state, step: step, adopted: adopted) else { return false }
            if finished { return true }
            state = try switchToFallback(index, state: state, step: step)
        } else if state.build?.phase == .sorted {
            guard let finished = try await runSortedBuild(index, state: &state, step: step, adopted: adopted) else { return false }
            if finished { return true }
            // A NULL key: on to the fallback.
            state = try switchToFallback(index, state: state, step: step)
        }
        return try await runFallbackBuild(index, state: &state, step: step, adopted: adopted)
    }

    // MARK: At once, while the store is idle

    /// The longest an index built at once may hold the write lock, in idle batch budgets.
    static let atOnceBudgets = 8
    /// The rows SQLite's `CREATE INDEX` is assumed to index per second here (about 3M/s
    /// measured at 1M and 4M rows on the benchmark machine), for deciding whether an index
    /// fits in its time limit; an index that does not is rolled back at the limit.
    static let atOnceRowsPerSecond = 2_500_000.0
    /// The sorter's memory during an index built at once (`PRAGMA cache_size` in KiB): SQLite
    /// sorts that much at a time and writes it to a temporary file without reaching its
    /// progress handler (Python's `sqlite3` on the benchmark's 1M and 4M rows, the longest of
    /// these stretches: 7–10 ms with 2,000 KiB, 3.5–6 ms with 500 KiB, 3–5.6 ms with 250 KiB).
    static let atOnceSorterKiB = 256
    /// How long SQLite's sorter sets up the merge of the pieces it wrote, per row of the table:
    /// one step that no progress handler reaches, at the turn from sorting to building, that
    /// grows with the table (8 ms at 1M rows, 24–39 ms at 4M, whatever the sorter's memory or
    /// `PRAGMA threads`, which only adds a wait for its threads there). A client arriving then
    /// waits for it, so an index is built at once only when this fits what no check may cut
    /// short (``StepAside/fitsUninterruptibly(_:)``): about 625,000 rows with the shipped 5 ms
    /// (measured through stratad at 1M rows: 8.2–8.4 ms).
    static let atOnceMergeSetupPerRow = Duration.nanoseconds(8)

    /// Builds `index` with SQLite's own `CREATE INDEX`, in one idle batch: one sort, one
    /// pass, about the time the sqlite3 CLI takes, instead of the sorted build's runs and
    /// merges. Only while nobody calls the store (the batch begins as an idle batch would:
    /// ``beginBatch(_:)``) and only when the table's estimated rows fit in
    /// ``atOnceBudgets`` idle budgets and the sorter's setup of its merge fits what no check
    /// may cut short (``atOnceMergeSetupPerRow``); a client's arrival aborts it (SQLite's progress handler,
    /// with the sorter's memory bounded by ``atOnceSorterKiB`` so that the handler is reached
    /// often), and so do a stop and the time limit. Whatever ends it early rolls it back, and
    /// the build goes on in bounded steps (``beginSortedBuild``); a stop is rethrown as any
    /// batch's is. Returns whether the index was built.
    private func buildIndexAtOnce(_ index: IndexLayout, on table: String, as name: String, state: inout DeferredLedger.Progress,
                                  step: TaskStep, adopted: (inout DeferredLedger.Progress, Database) throws -> Void) async throws -> Bool {
        guard options.idleBatchBudget > options.batchBudget, stepAside.watchesClients else { return false }
        let limit = options.idleBatchBudget * Self.atOnceBudgets
        let rows = try await store.database.read { db in try TableStatistics.estimatedRows(table, db) }
        guard Double(rows) <= Self.atOnceRowsPerSecond * limit.seconds,
              stepAside.fitsUninterruptibly(Self.atOnceMergeSetupPerRow * Int(clamping: rows)) else { return false }
        guard await mayContinue() else { return false }
        beginBatch(step)
        guard stepAside.isIdle else { return false }
        let started = ContinuousClock.now
        var next = state
        do {
            try writer("build index at once") { db in
                try db.execute(sql: "PRAGMA cache_size = -\(Self.atOnceSorterKiB)")
                defer { try? db.execute(sql: "PRAGMA cache_size = -\(Self.cacheKiB)") }
                try inBatchTransaction(step.session, db, interruptible: true, limit: limit) {
                    try db.execute(sql: store.layout.createIndexSQL(index, named: name, on: table))
                    FaultInjection.point("index.atOnce")
                    next.build = nil
                    try adopted(&next, db)
                    // (No row left when `adopted` completed the task: the update changes nothing.)
                    try DeferredLedger.saveProgress(next, id: step.id, in: db)
                }
            }
        } catch is StepAside.Yielded {
            gaveWay(step)
            store.logger.info("building index \(index.name) at once gave way to a client; it goes on in bounded steps", metadata: [
                "strata.table": "\(table)", "strata.ms": "\(Self.milliseconds(ContinuousClock.now - started))",
            ])
            return false
        } catch is StepAside.Overrun {
            store.logger.info("building index \(index.name) at once ran past \(Self.milliseconds(limit)) ms and was rolled back; it goes on in bounded steps", metadata: [
                "strata.table": "\(table)", "strata.rows": "\(rows)",
            ])
            return false
        } catch where stepAside.caused(error) {
            throw error
        } catch {
            // A unique key that does not hold, no room for the sorter's files, …: the bounded
            // build meets the same data and reports it as it always has.
            store.logger.info("building index \(index.name) at once failed; it goes on in bounded steps", metadata: [
                "strata.table": "\(table)", "strata.error": "\(error)",
            ])
            return false
        }
        completedIdleBatch()
        state = next
        step.counters.batches += 1
        step.counters.rows += rows
        store.logger.info("built index \(index.name) at once while the store was idle", metadata: [
            "strata.table": "\(table)", "strata.ms": "\(Self.milliseconds(ContinuousClock.now - started))",
        ])
        return true
    }

    /// The key columns of `index` with the declared types of `table`.
    private func sortKeys(_ index: IndexLayout, table: String, in db: Database) throws -> [IndexSortBuffer.Key] {
        let types = try declaredTypes(table, in: db)
        return index.columns.map { IndexSortBuffer.Key(column: $0.name, type: types[$0.name] ?? "", descending: !$0.ascending) }
    }

    private func nullPredicate(_ index: IndexLayout, prefix: String) -> String {
        index.columns.map { "\(prefix)\(quoteIdentifier($0.name)) IS NULL" }.joined(separator: " OR ")
    }

    // MARK: Sorted build

    private func beginSortedBuild(_ index: IndexLayout, on table: String, as name: String, source: (table: String, index: String)?,
                                  state: DeferredLedger.Progress, step: TaskStep) throws -> DeferredLedger.Progress {
        var next = state
        try batch(step.session) { db in
            let container = try IndexRelocation.freeName("_strata_sorted_\(index.name)", in: db)
            let changes = try IndexRelocation.freeName("_strata_changes_\(index.name)", in: db)
            let nulls = try IndexRelocation.freeName("_strata_nulls_\(index.name)", in: db)
            let keys = try sortKeys(index, table: table, in: db)
            var definitions: [String] = []
            var primaryKey: [String] = []
            for (i, key) in keys.enumerated() {
                definitions.append("\"k\(i)\" \(key.type)")
                primaryKey.append("\"k\(i)\"\(key.descending ? " DESC" : "")")
            }
            try db.execute(sql: "CREATE TABLE \(quoteIdentifier(container)) (\(definitions.joined(separator: ", ")), \"rowid_\" INTEGER, PRIMARY KEY (\(primaryKey.joined(separator: ", ")), \"rowid_\")) WITHOUT ROWID")
            try db.execute(sql: "CREATE TABLE \(quoteIdentifier(changes)) (\"rid\" INTEGER PRIMARY KEY)")
            try db.execute(sql: "CREATE TABLE \(quoteIdentifier(nulls)) (\"rid\" INTEGER PRIMARY KEY)")
            for sql in sortedBuildTriggers(index, table: table, container: container, changes: changes, nulls: nulls, alias: try rowidAlias(table, in: db)) {
                try db.execute(sql: sql)
            }
            next.build = DeferredLedger.IndexBuildProgress(index: index.name, name: name, table: table, phase: .sorted,
                                                          container: container, changes: changes, nulls: nulls,
                                                          sourceTable: source?.table, sourceIndex: source?.index)
            FaultInjection.point("index.start")
            try DeferredLedger.saveProgress(next, id: step.id, in: db)
        }
        return next
    }

    /// Triggers that record changed rowids and NULL keys and keep the container current.
    private func sortedBuildTriggers(_ index: IndexLayout, table: String, container: String, changes: String, nulls: String, alias: String?) -> [String] {
        let t = quoteIdentifier(table), w = quoteIdentifier(container), l = quoteIdentifier(changes), n = quoteIdentifier(nulls)
        let keyNames = (index.columns.indices.map { "\"k\($0)\"" } + ["\"rowid_\""]).joined(separator: ", ")
        func insert(_ row: String) -> String {
            let values = (index.columns.map { "\(row).\(quoteIdentifier($0.name))" } + ["\(row).rowid"]).joined(separator: ", ")
            return """
                INSERT INTO \(l) ("rid") VALUES (\(row).rowid) ON CONFLICT DO NOTHING;
                INSERT INTO \(n) ("rid") SELECT \(row).rowid WHERE \(nullPredicate(index, prefix: "\(row).")) ON CONFLICT DO NOTHING;
                INSERT INTO \(w) (\(keyNames)) SELECT \(values) WHERE NOT (\(nullPredicate(index, prefix: "\(row)."))) ON CONFLICT DO NOTHING;
                """
        }
        func delete(_ row: String) -> String {
            let match = (index.columns.enumerated().map { "\"k\($0.offset)\" = \(row).\(quoteIdentifier($0.element.name))" } + ["\"rowid_\" = \(row).rowid"]).joined(separator: " AND ")
            return """
                INSERT INTO \(l) ("rid") VALUES (\(row).rowid) ON CONFLICT DO NOTHING;
                DELETE FROM \(n) WHERE "rid" = \(row).rowid;
                DELETE FROM \(w) WHERE \(match);
                """
        }
        let prefix = "_strata_rw_\(container)_"
        let watched = (index.columns.map(\.name) + (alias.map { [$0] } ?? [])).map(quoteIdentifier).joined(separator: ", ")
        // Only an update that changes the row's entry: a key value (compared byte for byte and
        // by type, as the entry stores it, whatever the column's collation) or the rowid. A
        // column named in an UPDATE's SET fires `UPDATE OF` even when its value stays — as it
        // does in every rewrite mirror's upsert — and each such write would otherwise note the
        // row as changed and put its entry ahead of the merge, where the merge's appends split
        // pages around it; an unchanged entry is the one the runs hold.
        let moved = (index.columns.map { column -> String in
            let c = quoteIdentifier(column.name)
            return "OLD.\(c) IS NOT NEW.\(c) COLLATE BINARY OR typeof(OLD.\(c)) IS NOT typeof(NEW.\(c))"
        } + ["OLD.rowid IS NOT NEW.rowid"]).joined(separator: " OR ")
        return [
            "CREATE TRIGGER \(quoteIdentifier(prefix + "ins")) AFTER INSERT ON \(t) BEGIN \(insert("NEW")) END",
            "CREATE TRIGGER \(quoteIdentifier(prefix + "upd")) AFTER UPDATE OF \(watched) ON \(t) WHEN \(moved) BEGIN \(delete("OLD")) \(insert("NEW")) END",
            "CREATE TRIGGER \(quoteIdentifier(prefix + "del")) AFTER DELETE ON \(t) BEGIN \(delete("OLD")) END",
        ]
    }

    /// Sorts the table's entries into runs, merges them into the container, adopts. Returns
    /// nil when stopped, false when a NULL key sends the build to the fallback, true when the
    /// index is in place. Every step is durable: a stop, a close or a crash loses at most the
    /// run being sorted or the batch being merged (``IndexSortBuffer``).
    private func runSortedBuild(_ index: IndexLayout, state: inout DeferredLedger.Progress, step: TaskStep,
                                adopted: (inout DeferredLedger.Progress, Database) throws -> Void) async throws -> Bool? {
        guard state.build != nil else { return nil }
        let buffer = try sortBuffer(for: index, step: step, state: &state)
        var build = state.build!
        let clock = ContinuousClock()
        var mark = clock.now
        var phases: [String] = []
        func lap(_ name: String) {
            phases.append("\(name)=\(Self.milliseconds(clock.now - mark))")
            mark = clock.now
            store.logger.info("index build phase done", metadata: ["strata.index": "\(index.name)", "strata.phase": "\(name)"])
        }
        // 1. Sort the table's entries into runs (the buffer reads the store: no lock), a run at a time.
        if build.collected != Int64.max {
            // Runs long enough that the table fits in `maxRuns` of them (rowid span: the b-tree's
            // two ends; `max(rowid) - min(rowid)` in one SELECT scanned the whole table, 0.57 s at
            // 4M rows, before the first run was sorted).
            let table = build.table
            let span = try await store.database.read { db in try TableStatistics.estimatedRows(table, db) }
            let runSize = IndexSortBuffer.runSize(forRows: span)
            while true {
                guard await mayContinue() else { return nil }
                let batchStart = batchClockStarts()
                let n = build.runs ?? 0
                guard let (upper, sawNull) = try buffer.sortRun(n, from: build.table, after: build.collected, size: runSize,
                                                               shouldContinue: options.shouldContinue, interruptRequested: options.interruptRequested) else {
                    return nil   // stopped: that run is sorted again
                }
                if sawNull {
                    store.indexBuffers.withLock { _ = $0.removeValue(forKey: build.container) }
                    buffer.discard()
                    return false
                }
                FaultInjection.point("index.sorted-run")
                build.collected = upper ?? Int64.max
                build.runs = n + 1
                state.build = build
                try saveBuild(state, step: step)
                finishedBatch(step, started: batchStart, rows: 0, rowsDone: state.rowsDone, done: false)
                FaultInjection.point("index.collect")
                if upper == nil { break }
                guard await pause() else { return nil }
            }
            lap("sort")
        }
        // 2. Merge the runs into the container in key order, a batch at a time (the writer
        // attaches the buffer meanwhile). Merging costs more per entry than sorting: the batch
        // size adapts afresh.
        step.counters.batchSize = Counters.initialBatchSize
        let runCount = build.runs ?? 0
        let merge = SortedRunMerge(keys: buffer.keys, lengths: try buffer.runLengths(runCount))
        try attach(buffer)
        defer { detach() }
        let overlap = SortedRunMerge.Overlap()
        if build.merged?.count != runCount { build.merged = Array(repeating: 0, count: runCount) }
        let merged = build.merged == merge.lengths ? true : try await runBatches(step) { size in
            let from = build.merged!
            var candidate = build
            var next = state
            if merge.needsPrefill(after: from) { try buffer.read { db in try merge.prefill(after: from, in: db) } }
            let count: Int64 = try batch(step.session, interruptible: true) { db in
                let to = try merge.next(after: from, size: size, in: db)
                // The next batch's read-ahead, on another thread while this one appends (a
                // failure there only leaves the next batch to read its chunks itself). It ends
                // before the commit: the batch's write transaction covers the attached buffer,
                // and its COMMIT would find the buffer's connection holding a read lock.
                if to != merge.lengths {
                    overlap.start { _ = try? buffer.read { db in try merge.prefill(after: to, in: db) } }
                }
                defer { overlap.wait(giveWay: { stepAside.unitShouldEnd() }, interrupt: { buffer.interrupt() }) }
                let (sql, arguments) = merge.appendSQL(from: from, to: to, container: build.container, changes: build.changes)
                try db.cachedStatement(sql: sql).execute(arguments: arguments)
                candidate.merged = to
                next.build = candidate
                let count = zip(from, to).reduce(Int64(0)) { $0 + $1.1 - $1.0 }
                next.rowsDone += count
                try DeferredLedger.saveProgress(next, id: step.id, in: db)
                return count
            }
            build = candidate
            state = next
            FaultInjection.point("index.export")
            return BatchOutcome(rows: count, rowsDone: state.rowsDone, done: build.merged == merge.lengths)
        }
        guard merged else { return nil }
        lap("merge")
        // Detached before the buffer's file is removed: a DETACH that closes the last descriptor
        // of a removed file frees all of its blocks inside the writer's hold (90 ms at 16M rows).
        detach()
        // 3. The container becomes the index, unless a NULL key appeared.
        guard await mayContinue() else { return nil }
        let placed = try adoptContainer(index, build: build, state: &state, step: step, adopted: adopted)
        store.indexBuffers.withLock { _ = $0.removeValue(forKey: build.container) }
        buffer.discard()
        if placed {
            store.logger.info("built index \(index.name) in key order", metadata: [
                "strata.table": "\(build.table)", "strata.phases_ms": "\(phases.joined(separator: ","))",
                "strata.runs": "\(runCount)", "strata.entries": "\(merge.lengths.reduce(0, +))",
            ])
        }
        return placed
    }

    /// A sorted build whose entries are read, already in key order, from an index of the live
    /// table with the same key columns (a rewrite's shadow keeps the live table's rowids and
    /// values): no collecting, no sorting. Returns like ``runSortedBuild``.
    private func runStreamedBuild(_ index: IndexLayout, state: inout DeferredLedger.Progress, step: TaskStep,
                                  adopted: (inout DeferredLedger.Progress, Database) throws -> Void) async throws -> Bool? {
        guard var build = state.build, let sourceTable = build.sourceTable, let sourceIndex = build.sourceIndex else { return nil }
        let started = ContinuousClock.now
        let t = quoteIdentifier(sourceTable), source = quoteIdentifier(sourceIndex)
        let cursor = KeysetCursor(source: "\(t) INDEXED BY \(source)",
                                  columns: index.columns.map { KeysetCursor.Column(expression: quoteIdentifier($0.name)) } + [KeysetCursor.Column(expression: "rowid")])
        if build.sourceCursor == nil {
            let nulls = index.columns.map { "\(quoteIdentifier($0.name)) IS NULL" }.joined(separator: " OR ")
            if try exists("SELECT 1 FROM \(t) INDEXED BY \(source) WHERE \(nulls)") { return false }
        }
        step.counters.batchSize = Counters.initialBatchSize
        let streamed = try await runBatches(step) { size in
            var next = state
            var candidate = build
            let (done, count) = try batch(step.session, interruptible: true) { db -> (Bool, Int64) in
                // A seek per key level (``KeysetCursor``): a batch's cost does not grow with its key group.
                let position = build.sourceCursor?.map(\.databaseValue)
                let upperValues = try cursor.entry(size, after: position, in: db)
                let (entries, arguments) = cursor.entries(after: position, limit: size)
                let names = (index.columns.indices.map { "\"k\($0)\"" } + ["\"rowid_\""]).joined(separator: ", ")
                let selected = cursor.names.map { "\"\($0)\"" }.joined(separator: ", ")
                try db.execute(sql: """
                    INSERT INTO \(quoteIdentifier(build.container)) (\(names)) SELECT \(selected) FROM (\(entries))
                    WHERE "\(cursor.names.last!)" NOT IN (SELECT "rid" FROM \(quoteIdentifier(build.changes))) ON CONFLICT DO NOTHING
                    """, arguments: arguments)
                let inserted = Int64(db.changesCount)
                candidate.sourceCursor = upperValues?.map(DeferredLedger.StoredValue.init)
                next.build = candidate
                next.rowsDone += inserted
                try DeferredLedger.saveProgress(next, id: step.id, in: db)
                return (upperValues == nil, inserted)
            }
            build = candidate
            state = next
            FaultInjection.point("index.export")
            return BatchOutcome(rows: count, rowsDone: state.rowsDone, done: done)
        }
        guard streamed else { return nil }
        guard await mayContinue() else { return nil }
        let placed = try adoptContainer(index, build: build, state: &state, step: step, adopted: adopted)
        if placed {
            store.logger.info("built index \(index.name) in key order from \(sourceIndex)", metadata: [
                "strata.table": "\(build.table)", "strata.ms": "\(Self.milliseconds(ContinuousClock.now - started))",
            ])
        }
        return placed
    }

    /// The sort buffer's file for the build whose container is `container`.
    func sortBufferPath(_ container: String) -> String { "\(store.url.path)-\(container).sort" }

    /// The buffer of this build: the one the store holds, or the one an earlier run (this
    /// process or one before a crash) left in its file, or a new one (sorting starts over;
    /// entries merged already stay in the container: appending them again changes nothing).
    private func sortBuffer(for index: IndexLayout, step: TaskStep, state: inout DeferredLedger.Progress) throws -> IndexSortBuffer {
        let build = state.build!
        if let kept = store.indexBuffers.withLock({ $0[build.container] }) { return kept }
        let keys = try store.database.read { db in try sortKeys(index, table: build.table, in: db) }
        let buffer = try IndexSortBuffer(path: sortBufferPath(build.container), storePath: store.url.path, keys: keys,
                                         identity: "\(step.id) \(build.container)", runs: build.runs ?? 0)
        if buffer.isNew {
            state.build?.collected = nil
            state.build?.runs = nil
            state.build?.merged = nil
        }
        store.indexBuffers.withLock { $0[build.container] = buffer }
        return buffer
    }

    private func saveBuild(_ state: DeferredLedger.Progress, step: TaskStep) throws {
        try batch(step.session) { db in try DeferredLedger.saveProgress(state, id: step.id, in: db) }
    }

    private func attach(_ buffer: IndexSortBuffer) throws {
        try writer { db in
            let attached = try Bool.fetchOne(db, sql: "SELECT count(*) > 0 FROM pragma_database_list WHERE name = ?", arguments: [IndexSortBuffer.attachment]) ?? false
            if !attached {
                try db.execute(sql: "ATTACH DATABASE ? AS \(IndexSortBuffer.attachment)", arguments: [buffer.path])
            }
        }
    }

    private func detach() {
        _ = try? writer { db in
            if try Bool.fetchOne(db, sql: "SELECT count(*) > 0 FROM pragma_database_list WHERE name = ?", arguments: [IndexSortBuffer.attachment]) ?? false {
                try db.execute(sql: "DETACH DATABASE \(IndexSortBuffer.attachment)")
                db.clearSchemaCache()   // and the merge's cached statements over the runs
            }
        }
    }

    /// Turns the container into the index `build.name` on `build.table` (one short transaction
    /// of O(1) schema edits). False when a NULL key appeared meanwhile.
    private func adoptContainer(_ index: IndexLayout, build: DeferredLedger.IndexBuildProgress, state: inout DeferredLedger.Progress,
                                step: TaskStep, adopted: (inout DeferredLedger.Progress, Database) throws -> Void) throws -> Bool {
        var next = state
        let placed: Bool = try batch(step.session) { db in
            let hasNulls = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(quoteIdentifier(build.nulls)))") ?? true
            if hasNulls { return false }
            try dropTriggers(prefix: "_strata_rw_\(build.container)_", in: db)
            try IndexRelocation.adopt(table: build.container, asIndex: build.name, on: build.table,
                                      sql: store.layout.createIndexSQL(index, named: build.name, on: build.table), in: db)
            try IndexRelocation.commitSchemaChange(in: db)
            FaultInjection.point("index.adopt")
            next.build = nil
            try adopted(&next, db)
            for helper in [build.changes, build.nulls] {
                try dropNowOrLater(helper, summary: "drop table \(helper) (bookkeeping of the build of index \(index.name))", in: db)
            }
            // (No row left when `adopted` completed the task: the update changes nothing.)
            if try db.tableExists(DeferredLedger.table) { try DeferredLedger.saveProgress(next, id: step.id, in: db) }
            return true
        }
        if placed {
            state = next
            step.counters.batches += 1
        }
        return placed
    }

    /// Drops a bookkeeping table at once when it is small (a few thousand rows free in well
    /// under a batch), otherwise records a batched drop.
    private func dropNowOrLater(_ table: String, summary: String, in db: Database) throws {
        let rows = try Int64.fetchOne(db, sql: "SELECT count(*) FROM (SELECT 1 FROM \(quoteIdentifier(table)) LIMIT 5001)") ?? 0
        if rows <= 5000 {
            try db.execute(sql: "DROP TABLE \(quoteIdentifier(table))")
        } else {
            try appendDrop(table, summary: summary, rows: rows, in: db)
        }
    }

    func appendDrop(_ table: String, summary: String, rows: Int64, in db: Database) throws {
        try DeferredLedger.append(MigrationOperation(.dropTable(table), deferrable: true, summary: summary),
                                  kind: .dropTable, summary: summary, rowsTotal: rows, in: db)
    }

    // MARK: Fallback build

    /// Leaves the sorted build (its container and bookkeeping become drop tasks) for a side table
    /// with the index maintained row by row.
    private func switchToFallback(_ index: IndexLayout, state: DeferredLedger.Progress, step: TaskStep) throws -> DeferredLedger.Progress {
        var next = state
        guard var build = state.build else { return state }
        store.indexBuffers.withLock { $0.removeValue(forKey: build.container) }?.close()
        IndexSortBuffer.remove(sortBufferPath(build.container))
        try batch(step.session) { db in
            try dropTriggers(prefix: "_strata_rw_\(build.container)_", in: db)
            for helper in [build.container, build.changes, build.nulls] where try db.tableExists(helper) {
                try dropNowOrLater(helper, summary: "drop table \(helper) (a sorted build of index \(index.name) left for a NULL key)", in: db)
            }
            let alias = try rowidAlias(build.table, in: db)
            let side = SideTable(name: try IndexRelocation.freeName("_strata_build_\(index.name)", in: db), table: build.table,
                                 rowidAlias: alias, columns: index.columns.map(\.name))
            try db.execute(sql: side.createSQL(types: try declaredTypes(build.table, in: db)))
            let temporary = try IndexRelocation.freeName("_strata_ix_\(index.name)", in: db)
            try db.execute(sql: store.layout.createIndexSQL(index, named: temporary, on: side.name))
            for sql in side.triggerSQL(rowidAlias: alias) { try db.execute(sql: sql) }
            build.phase = .fallback
            build.side = side.name
            build.sideIndex = temporary
            build.sideLastKey = nil
            next.build = build
            FaultInjection.point("index.fallback")
            try DeferredLedger.saveProgress(next, id: step.id, in: db)
        }
        store.logger.info("building index \(index.name) on a side table: a key is NULL", metadata: ["strata.table": "\(build.table)"])
        return next
    }

    private func runFallbackBuild(_ index: IndexLayout, state: inout DeferredLedger.Progress, step: TaskStep,
                                  adopted: (inout DeferredLedger.Progress, Database) throws -> Void) async throws -> Bool {
        guard let build = state.build, let sideName = build.side, let sideIndex = build.sideIndex else {
            throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: "the ledger's progress of the build of index \(index.name) names no side table")
        }
        let side = try readSideTable(sideName, of: build.table)
        guard try await copyIntoSideTable(side, state: &state, cursor: \.buildSideLastKey, step: step, faultPrefix: "index") else { return false }
        guard await mayContinue() else { return false }
        var next = state
        try batch(step.session) { db in
            try db.execute(sql: side.copySQL(upTo: false), arguments: [next.buildSideLastKey ?? Int64.min])
            try dropTriggers(prefix: side.triggerPrefix, in: db)
            try IndexRelocation.relocate(index: sideIndex, to: build.name, table: build.table,
                                         sql: store.layout.createIndexSQL(index, named: build.name, on: build.table), in: db)
            try IndexRelocation.commitSchemaChange(in: db)
            FaultInjection.point("index.finish")
            next.build = nil
            try adopted(&next, db)
            try appendDrop(side.name, summary: "drop table \(side.name) (the side table that built index \(index.name))", rows: state.rowsDone, in: db)
            // (No row left when `adopted` completed the task: the update changes nothing.)
            try DeferredLedger.saveProgress(next, id: step.id, in: db)
        }
        state = next
        step.counters.batches += 1
        return true
    }
}

extension DeferredFinisher {
    static func milliseconds(_ d: Duration) -> String {
        String(format: "%.1f", d.milliseconds)
    }
}

extension DeferredLedger.Progress {
    /// The fallback build's copy cursor (for ``DeferredFinisher/copyIntoSideTable``).
    var buildSideLastKey: Int64? {
        get { build?.sideLastKey }
        set { build?.sideLastKey = newValue }
    }
}
