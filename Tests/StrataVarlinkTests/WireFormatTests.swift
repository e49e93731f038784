import Foundation
import StrataVarlink
import Testing

/// The bytes on the wire of replies and errors, as the server encodes them and as a client
/// decodes them: states and kinds are JSON strings, errors carry their fields. The literals
/// were taken before states became Varlink enums and errors generated code; they must not
/// change, so that clients built before (stratactl, the Python `varlink` package) still work.
@Suite struct WireFormatTests {
    /// A reply with `value` as its parameters, as the server sends it (without the NUL).
    static func wire<T: Encodable>(_ value: T) throws -> String {
        String(decoding: VarlinkReply(parameters: try JSONValueEncoder().encodeObject(value)).encoded(), as: UTF8.self)
    }

    /// An error reply, as the server sends it.
    static func wire(_ error: any VarlinkErrorConvertible) -> String {
        String(decoding: VarlinkReply(error.varlinkError).encoded(), as: UTF8.self)
    }

    /// The parameters of a reply's bytes decoded as `T`, as a client decodes them.
    static func decode<T: Decodable>(_ type: T.Type, _ bytes: String) throws -> T {
        try JSONValueDecoder(rejectsUnknownKeys: false).decode(T.self, from: .object(try VarlinkReply.parse(Data(bytes.utf8)).parameters))
    }

    static let storeInfo = StrataAdmin.StoreInfo(
        name: "fleet", path: "/var/lib/strata/fleet.sqlite", state: .failed, modelVersion: nil, targetVersion: "v2",
        deferCleanup: true, pendingTasks: 2, finishing: false, requests: 7, error: "the model does not open")
    static let storeInfoBytes = #"{"parameters":{"stores":[{"deferCleanup":true,"error":"the model does not open","finishing":false,"held":null,"modelVersion":null,"name":"fleet","path":"/var/lib/strata/fleet.sqlite","pendingTasks":2,"requests":7,"state":"failed","targetVersion":"v2"}]}}"#

    @Test func aStoreStateIsAString() throws {
        #expect(try Self.wire(StrataAdmin.ListStores.Reply(stores: [Self.storeInfo])) == Self.storeInfoBytes)
        #expect(try Self.decode(StrataAdmin.ListStores.Reply.self, Self.storeInfoBytes).stores == [Self.storeInfo])
    }

    static let scheduler = StrataAdmin.SchedulerInfo(state: .waiting, reason: "waiting: io pressure avg10 31% > 10%", paused: false,
                                                     workingOn: nil, signals: nil, unavailable: nil, stats: nil)
    static let schedulerBytes = #"{"parameters":{"scheduler":{"paused":false,"reason":"waiting: io pressure avg10 31% > 10%","signals":null,"state":"waiting","stats":null,"unavailable":null,"workingOn":null}}}"#

    @Test func aSchedulerStateIsAString() throws {
        #expect(try Self.wire(StrataAdmin.SchedulerReply(scheduler: Self.scheduler)) == Self.schedulerBytes)
        #expect(try Self.decode(StrataAdmin.SchedulerReply.self, Self.schedulerBytes).scheduler == Self.scheduler)
    }

    static let task = StrataAdmin.DeferredTaskInfo(id: 3, kind: .rewriteTable, table: "ZAIRCRAFT", summary: "rewrite ZAIRCRAFT",
                                                   state: .running, rowsDone: 10, rowsTotal: 40, fraction: 0.25)
    static let taskBytes = #"{"parameters":{"stores":[{"store":"fleet","tasks":[{"fraction":0.25,"held":null,"id":3,"kind":"rewriteTable","rowsDone":10,"rowsTotal":40,"state":"running","summary":"rewrite ZAIRCRAFT","table":"ZAIRCRAFT"}]}]}}"#

    @Test func aTaskKindAndStateAreStrings() throws {
        let reply = StrataAdmin.Pending.Reply(stores: [.init(store: "fleet", tasks: [Self.task])])
        #expect(try Self.wire(reply) == Self.taskBytes)
        #expect(try Self.decode(StrataAdmin.Pending.Reply.self, Self.taskBytes).stores.first?.tasks == [Self.task])
    }

    static let skippedBytes = #"{"parameters":{"progress":null,"reason":"paused: python","results":[],"state":"skipped"}}"#
    static let finishedBytes = #"{"parameters":{"progress":null,"reason":null,"results":[{"batches":4,"error":null,"freePages":null,"reclaimLeft":null,"replicaLag":null,"rowsProcessed":120,"seconds":0.5,"stoppedEarly":false,"store":"fleet","tasksFinished":2,"tasksRemaining":0}],"state":"finished"}}"#

    @Test func aFinishStateIsAString() throws {
        let skipped = StrataAdmin.FinishDeferred.Reply(state: .skipped, reason: "paused: python")
        #expect(try Self.wire(skipped) == Self.skippedBytes)
        #expect(try Self.decode(StrataAdmin.FinishDeferred.Reply.self, Self.skippedBytes) == skipped)
        let finished = StrataAdmin.FinishDeferred.Reply(state: .finished, results: [
            .init(store: "fleet", tasksFinished: 2, tasksRemaining: 0, rowsProcessed: 120, batches: 4, seconds: 0.5, stoppedEarly: false, error: nil),
        ])
        #expect(try Self.wire(finished) == Self.finishedBytes)
        #expect(try Self.decode(StrataAdmin.FinishDeferred.Reply.self, Self.finishedBytes) == finished)
    }

    static let transactionBytes = #"{"parameters":{"latest":9,"next":9,"transactions":[{"author":null,"changes":[{"entity":"Aircraft","id":5,"kind":"update","properties":["tailNumber"],"tombstone":null}],"kind":"objects","time":"2026-11-25T04:00:00Z","token":9,"user":"root"}]}}"#

    @Test func historyKindsAreStrings() throws {
        let reply = StrataStore.History.Reply(transactions: [
            .init(token: 9, time: "2026-11-25T04:00:00Z", kind: .objects, user: "root",
                  changes: [.init(entity: "Aircraft", id: 5, kind: .update, properties: ["tailNumber"])]),
        ], next: 9, latest: 9)
        #expect(try Self.wire(reply) == Self.transactionBytes)
        #expect(try Self.decode(StrataStore.History.Reply.self, Self.transactionBytes) == reply)
    }

    @Test func anOperationIsDecodedFromItsString() throws {
        let call = #"{"parameters":{"operations":[{"op":"delete","entity":"Aircraft","id":4}],"store":"fleet"}}"#
        let parameters = try JSONValueDecoder().decode(StrataStore.Batch.Parameters.self,
                                                       from: .object(try VarlinkReply.parse(Data(call.utf8)).parameters))
        #expect(parameters.operations == [.init(op: .delete, entity: "Aircraft", id: 4)])
    }

    @Test func errorsCarryTheirFields() throws {
        #expect(Self.wire(StrataAdmin.Failure.noSuchStore(.init(store: "x", known: ["a", "b"])))
                    == #"{"error":"io.strata.Admin.NoSuchStore","parameters":{"known":["a","b"],"reason":"no store named 'x'; known stores: a, b","store":"x"}}"#)
        #expect(Self.wire(StrataStore.Failure.noSuchStore(.init(store: "x", known: [])))
                    == #"{"error":"io.strata.Store.NoSuchStore","parameters":{"known":[],"reason":"no store named 'x'; known stores: none","store":"x"}}"#)
        #expect(Self.wire(StrataAdmin.Failure.unknownSetting(.init(key: "k", known: ["idle_after", "batch_budget"])))
                    == #"{"error":"io.strata.Admin.UnknownSetting","parameters":{"key":"k","known":["idle_after","batch_budget"],"reason":"unknown setting 'k'; known: idle_after, batch_budget"}}"#)
        #expect(Self.wire(StrataAdmin.Failure.alreadyRunning(.init(store: "fleet")))
                    == #"{"error":"io.strata.Admin.AlreadyRunning","parameters":{"reason":"deferred work already runs on this store","store":"fleet"}}"#)
        #expect(Self.wire(StrataAdmin.Failure.reloadFailed(.init(file: "/etc/strata/stratad.toml", key: "store.fleet", reason: "bad")))
                    == #"{"error":"io.strata.Admin.ReloadFailed","parameters":{"file":"/etc/strata/stratad.toml","key":"store.fleet","reason":"bad"}}"#)
        #expect(Self.wire(StrataStore.Failure.objectNotFound(.init(entity: "Aircraft", id: 42, operation: nil)))
                    == #"{"error":"io.strata.Store.ObjectNotFound","parameters":{"entity":"Aircraft","id":42}}"#)
        #expect(Self.wire(StrataStore.Failure.invalidPredicate(.init(format: "a ==", position: nil, reason: "ends early")))
                    == #"{"error":"io.strata.Store.InvalidPredicate","parameters":{"format":"a ==","reason":"ends early"}}"#)
        #expect(Self.wire(StrataStore.Failure.objectError(.init(code: "validation", entity: "Aircraft", property: nil, reason: "r", operation: 2)))
                    == #"{"error":"io.strata.Store.ObjectError","parameters":{"code":"validation","entity":"Aircraft","operation":2,"reason":"r"}}"#)
        #expect(Self.wire(StrataStore.Failure.historyExpired(.init(store: "s", since: 1, purgedThrough: 5, latest: 9, reason: "r")))
                    == #"{"error":"io.strata.Store.HistoryExpired","parameters":{"latest":9,"purgedThrough":5,"reason":"r","since":1,"store":"s"}}"#)
    }

    @Test func errorsAreDecodedFromTheirBytes() throws {
        let reply = try VarlinkReply.parse(Data(#"{"error":"io.strata.Store.ObjectNotFound","parameters":{"entity":"Aircraft","id":42,"operation":1}}"#.utf8))
        let failure = StrataStore.Failure(VarlinkError(reply.error!, reply.parameters))
        #expect(failure == .objectNotFound(.init(entity: "Aircraft", id: 42, operation: 1)))
        guard case .objectNotFound(let parameters) = failure else { Issue.record("\(String(describing: failure))"); return }
        #expect(parameters.reason == "no Aircraft with id 42 (operation 1)")
        #expect(StrataAdmin.Failure(VarlinkError("io.strata.Admin.Nope", [:])) == nil)
    }
}
