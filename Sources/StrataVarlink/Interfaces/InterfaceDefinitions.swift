// Generated from varlink/*.varlink (a test checks they match): the interface definitions
// served by org.varlink.service.GetInterfaceDescription.
// Do not edit: change the .varlink file and run scripts/generate-varlink-definitions.sh.

enum InterfaceDefinitions {
    static let admin = #"""
        # Administration of stratad: status, stores, deferred migration work, the idle
        # scheduler and its settings, checkpoints, backups, configuration reload and metrics.
        interface io.strata.Admin

        # A hosted store: ready, failed (error says why) or closed.
        type StoreInfo (
          name: string,
          path: string,
          state: (ready, failed, closed),
          modelVersion: ?string,
          targetVersion: ?string,
          deferCleanup: bool,
          pendingTasks: int,
          finishing: bool,
          requests: int,
          error: ?string
        )

        # The idle scheduler: its state
        # and the reason for it ("waiting: io pressure avg10 31% > 10%"), the latest
        # signal readings, and what it did (see docs/Scheduler.md).
        type SchedulerInfo (
          state: (idle, waiting, running, paused, disabled),
          reason: string,
          paused: bool,
          workingOn: ?string,
          signals: ?[]SignalInfo,
          unavailable: ?[]string,
          stats: ?SchedulerStats
        )

        # One signal's latest reading against its threshold.
        type SignalInfo (
          signal: string,
          label: string,
          value: float,
          threshold: float,
          busy: bool,
          summary: string
        )

        # A pause of running deferred work: its cause and reason, and the time from the
        # first busy reading to the work having stopped.
        type PauseInfo (
          cause: string,
          reason: string,
          latencyMs: float,
          store: ?string,
          at: string
        )

        # What the scheduler did since the daemon started.
        type SchedulerStats (
          runs: int,
          workSeconds: float,
          delaySeconds: float,
          windowRuntimeSeconds: float,
          rowsProcessed: int,
          batches: int,
          tasksFinished: int,
          pauses: int,
          pausesByCause: [string]int,
          pauseLatencyP50Ms: float,
          pauseLatencyP99Ms: float,
          pauseLatencyMaxMs: float,
          recentPauses: []PauseInfo,
          errors: int,
          lastError: ?string
        )

        # One task of a store's deferred ledger.
        type DeferredTaskInfo (
          id: int,
          kind: (rewriteTable, dropTable, createIndex, dropIndex, incrementalVacuum, backup),
          table: ?string,
          summary: string,
          state: (pending, running, done),
          rowsDone: int,
          rowsTotal: int,
          fraction: float
        )

        type StorePending (
          store: string,
          tasks: []DeferredTaskInfo
        )

        # Progress of a FinishDeferred run, after a batch.
        type FinishProgress (
          store: string,
          taskId: int,
          taskIndex: int,
          taskCount: int,
          summary: string,
          rowsDone: int,
          rowsTotal: int,
          fraction: float
        )

        # What a FinishDeferred run did on one store. tasksRemaining is read from the
        # ledger after the run, also when it failed (error is set).
        type FinishResult (
          store: string,
          tasksFinished: int,
          tasksRemaining: int,
          rowsProcessed: int,
          batches: int,
          seconds: float,
          stoppedEarly: bool,
          error: ?string
        )

        # A scheduler setting, gh-ost style: key, value and what it means.
        type Setting (
          key: string,
          value: string,
          description: string
        )

        # The daemon: version, uptime, the STATUS= line, stores and scheduler.
        method Status() -> (
          version: string,
          pid: int,
          uptimeSeconds: float,
          status: string,
          stores: []StoreInfo,
          scheduler: SchedulerInfo
        )

        method ListStores() -> (stores: []StoreInfo)

        # Pending deferred work of one store, or of all stores.
        method Pending(store: ?string) -> (stores: []StorePending)

        # Finishes deferred work of one store (or all). wait: reply when done, streaming
        # FinishProgress replies with `more`; otherwise start it and reply at once.
        # now: run even when the scheduler is paused or the machine is busy; otherwise a
        # busy or paused scheduler makes it reply state skipped with the reason; without
        # wait it replies started; the progress replies of wait are running.
        # The final state: finished, stopped (early, work remains) or failed (a
        # store's run failed: its result has the error and the tasks that remain).
        method FinishDeferred(store: ?string, wait: ?bool, now: ?bool) -> (
          state: (skipped, started, running, finished, stopped, failed),
          reason: ?string,
          progress: ?FinishProgress,
          results: []FinishResult
        )

        method Pause(reason: ?string) -> (scheduler: SchedulerInfo)

        method Resume() -> (scheduler: SchedulerInfo)

        # Settings (all, or the one named by key: gh-ost's "key=?").
        method GetSettings(key: ?string) -> (settings: []Setting)

        # Changes a setting at run time (gh-ost's "key=value").
        method SetSetting(key: string, value: string) -> (setting: Setting, previous: string)

        # Checkpoints a store's WAL into its main file.
        method Checkpoint(store: string) -> (store: string, seconds: float)

        # Writes a consistent copy of a store to path (which must not exist).
        method Backup(store: string, path: string) -> (store: string, path: string, bytes: int)

        # Re-reads the configuration: opens added stores, closes removed ones.
        method Reload() -> (status: string, opened: []string, closed: []string)

        # The daemon's metrics in the Prometheus text exposition format (version 0.0.4):
        # requests, stores, deferred work and the idle scheduler (see docs/Daemon.md).
        method Metrics() -> (text: string)

        error NoSuchStore (store: string, known: []string, reason: string)
        error StoreUnavailable (store: string, reason: string)
        error StoreFailure (store: string, code: string, reason: string)
        error UnknownSetting (key: string, known: []string, reason: string)
        error InvalidSetting (key: string, value: string, reason: string)
        error AlreadyRunning (store: string, reason: string)
        error ReloadFailed (file: string, key: string, reason: string)
        """#

    static let store = #"""
        # Object access to hosted stores. Objects are JSON objects: attributes by name,
        # composite attributes as nested objects, to-one relationships as the target's
        # primary key, plus "_entity" and "_pk".
        interface io.strata.Store

        # One operation of a Batch: id for update and delete; values for insert and
        # update.
        type Operation (
          op: (insert, update, delete),
          entity: string,
          id: ?int,
          values: ?object
        )

        # Objects of an entity matching a predicate (NSPredicate-style format with %@
        # arguments), sorted by "key" or "key:desc" descriptors.
        method Fetch(
          store: string,
          entity: string,
          predicate: ?string,
          arguments: ?[]object,
          sort: ?[]string,
          limit: ?int,
          offset: ?int
        ) -> (objects: []object)

        method Count(store: string, entity: string, predicate: ?string, arguments: ?[]object) -> (count: int)

        # Inserts an object and returns it with its primary key. author (here and in
        # Update, Delete, Batch) is recorded in the change history beside the peer's user.
        method Insert(store: string, entity: string, values: object, author: ?string) -> (object: object)

        # Changes attributes of the object with primary key id.
        method Update(store: string, entity: string, id: int, values: object, author: ?string) -> (object: object)

        method Delete(store: string, entity: string, id: int, author: ?string) -> (deleted: bool)

        # Runs the operations in one transaction: all or none. results[i] is the object
        # inserted or updated by operations[i] (empty for a delete).
        method Batch(store: string, operations: []Operation, author: ?string) -> (results: []object)

        # One object changed by a history transaction. properties: what an update
        # changed; tombstone: a deleted object's preserveAfterDeletion attributes.
        type Change (
          entity: string,
          id: int,
          kind: (insert, update, delete),
          properties: []string,
          tombstone: ?object
        )

        # One committed transaction of the change history. kind: objects, or gap when
        # another process wrote the store without history (refetch what you cache).
        # time: ISO 8601; user: the writer's user; author: the name it gave.
        type Transaction (
          token: int,
          time: string,
          kind: (objects, gap),
          user: ?string,
          author: ?string,
          changes: []Change
        )

        # The transactions after token since (0: from the oldest kept), oldest first,
        # at most limit (1 to 10000). Continue from next until it equals latest.
        method History(store: string, since: int, entities: ?[]string, limit: int) -> (transactions: []Transaction, next: int, latest: int)

        # Streams with "more": a first reply without transaction (token: where the
        # observation starts), then each transaction after since (default: from now
        # on), as they commit. entities and predicate filter changes; a predicate needs
        # exactly one entity and applies to the objects as they are now (deletes pass).
        method Observe(store: string, entities: ?[]string, predicate: ?string, since: ?int) -> (transaction: ?Transaction, token: int)

        error NoSuchStore (store: string, known: []string, reason: string)
        error StoreUnavailable (store: string, reason: string)
        error StoreFailure (store: string, code: string, reason: string)
        error InvalidPredicate (format: string, position: ?int, reason: string)
        error ObjectError (code: string, entity: ?string, property: ?string, reason: string, operation: ?int)
        error ObjectNotFound (entity: string, id: int, operation: ?int)
        error HistoryExpired (store: string, since: int, purgedThrough: int, latest: int, reason: string)
        error InvalidHistoryToken (store: string, token: int, latest: int, reason: string)
        error ObserverOverflow (store: string, limit: int, token: int, reason: string)
        """#

}
