import Foundation
import Strata
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// Rolling deploys (issue 47, docs/Rollout.md) through the real daemon: clients of two model
/// versions served at once, the cleanup that drops what the older one uses held until its
/// clients go quiet, every refusal named.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct RolloutTests {
    // MARK: - Fixtures

    /// A sandbox hosting `fleet` (at `version`), and `typed` / `staged` (moved past the
    /// versions their refusals are about).
    struct Rig {
        let sandbox: DaemonSandbox
        let fleet: String
        let typed: String
        let staged: (models: String, stages: String)
        var store: String { sandbox.path("fleet.sqlite") }

        init() throws {
            sandbox = try DaemonSandbox()
            fleet = try FleetModels.writeFleet(in: sandbox.directory.path)
            typed = try FleetModels.writeTyped(in: sandbox.directory.path)
            staged = try FleetModels.writeStaged(in: sandbox.directory.path)
            try FleetModels.seedFleet(at: store, models: fleet)
            try FleetModels.seed(at: sandbox.path("typed.sqlite"), models: typed, version: "Typed 1", entity: "Item", rows: 3) { ["count": $0] }
            try FleetModels.seed(at: sandbox.path("staged.sqlite"), models: staged.models, version: "Staged 1", entity: "Item", rows: 3) { ["name": "n\($0)"] }
        }

        func writeConfig(version: String, grace: String? = nil, idleAfter: String = "1s") throws {
            let text = """
                stores:
                  - {name: fleet, path: \(store), model: \(fleet), version: \(version), backup: false}
                  - {name: typed, path: \(sandbox.path("typed.sqlite")), model: \(typed), version: Typed 2, backup: false}
                  - {name: staged, path: \(sandbox.path("staged.sqlite")), model: \(staged.models), version: Staged 2, stages: \(staged.stages), backup: false}
                sockets:
                  admin: {path: \(sandbox.adminSocket), mode: "0600"}
                  data: {path: \(sandbox.dataSocket), mode: "0600"}
                scheduler:
                  idle_after: \(idleAfter)
                  signals: requests
                \(grace.map { "rollout:\n  grace: \($0)\n" } ?? "")log_level: info

                """
            try text.write(toFile: sandbox.configPath, atomically: true, encoding: .utf8)
        }

        func start(version: String, grace: String? = nil, idleAfter: String = "1s") async throws -> DaemonProcess {
            try writeConfig(version: version, grace: grace, idleAfter: idleAfter)
            let daemon = try DaemonProcess(config: sandbox.configPath)
            try await waitForSocket(sandbox.adminSocket)
            try await waitForSocket(sandbox.dataSocket)
            return daemon
        }

        func admin<M: VarlinkMethod>(_ method: M.Type, _ parameters: M.Parameters) async throws -> M.Reply {
            try await VarlinkClient.withConnection(to: sandbox.adminSocket) { try await $0.call(method, parameters) }
        }

        func data<M: VarlinkMethod>(_ method: M.Type, _ parameters: M.Parameters) async throws -> M.Reply {
            try await VarlinkClient.withConnection(to: sandbox.dataSocket) { try await $0.call(method, parameters) }
        }

        func stratactl(_ arguments: [String]) async throws -> (status: Int32, output: String) {
            try await runCommandOffThread(Paths.stratactl, arguments + ["--socket", sandbox.adminSocket])
        }
    }

    /// What the clients were told: acknowledged writes and errors.
    final class Ledger: Sendable {
        let stop = Atomic<Bool>(false)
        /// Registration (or tail number) → the photo last acknowledged for it (nil: none set).
        let written = Mutex<[String: String?]>([:])
        let errors = Mutex<[String]>([])
        let calls = Atomic<Int>(0)

        func failed(_ who: String, _ error: any Error) {
            failed(who, "\(error)")
        }

        func failed(_ who: String, _ what: String) {
            errors.withLock { $0.append("\(who): \(what)") }
        }

        /// Acknowledged writes of clients whose name starts with `prefix`.
        func writes(_ prefix: String) -> Int {
            written.withLock { $0.keys.filter { $0.hasPrefix(prefix) }.count }
        }

        /// Waits until `condition` holds (at most a generous minute: a loaded machine, or
        /// processes stopped for a while, slow the clients down; no figure depends on speed).
        func waitUntil(_ condition: () -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(60)
            while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        }
    }

    /// A client of `version` (nil: names none) writing in its own names until stopped: inserts,
    /// updates of a removed attribute (old) or an added one (new), a Batch every fifth call, a
    /// fetch on the (renamed) key every third.
    static func client(_ name: String, version: String?, old: Bool, socket: String, ledger: Ledger) -> Task<Void, Never> {
        Task {
            let key = old ? "registration" : "tailNumber"
            do {
                try await VarlinkClient.withConnection(to: socket) { data in
                    var i = 0
                    var last: Int64?
                    while !ledger.stop.load(ordering: .relaxed) {
                        let id = "\(name)-\(i)"
                        var values: [String: JSONValue] = [key: .string(id), "seats": .int(Int64(i))]
                        if old { values["photo"] = .string("p-\(id)") } else { values["colour"] = .string("red") }
                        do {
                            if i % 5 == 4, let previous = last {
                                let update: [String: JSONValue] = old ? ["photo": .string("u-\(id)")] : ["colour": .string("blue")]
                                let reply = try await data.call(StrataStore.Batch.self, .init(store: "fleet", operations: [
                                    .init(op: .insert, entity: "Aircraft", values: .object(values)),
                                    .init(op: .update, entity: "Aircraft", id: previous, values: .object(update)),
                                ], version: version))
                                ledger.written.withLock { written in
                                    _ = written.updateValue(old ? "p-\(id)" : nil, forKey: id)
                                    if old, case .object(let updated)? = reply.results.last, case .string(let other)? = updated[key] {
                                        written[other] = "u-\(id)"
                                    }
                                }
                            } else {
                                let reply = try await data.call(StrataStore.Insert.self, .init(store: "fleet", entity: "Aircraft", values: .object(values), version: version))
                                last = reply.object["_pk"]?.intValue
                                ledger.written.withLock { _ = $0.updateValue(old ? "p-\(id)" : nil, forKey: id) }
                            }
                            if i % 3 == 2 {
                                let found = try await data.call(StrataStore.Fetch.self, .init(
                                    store: "fleet", entity: "Aircraft", predicate: "\(key) == %@", arguments: [.string(id)], sort: [key], version: version))
                                if found.objects.count != 1 { ledger.failed(name, "fetch of \(id) found \(found.objects.count) objects") }
                            }
                            ledger.calls.add(1, ordering: .relaxed)
                        } catch {
                            ledger.failed("\(name) call \(i)", error)
                        }
                        i += 1
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
            } catch {
                ledger.failed(name, error)
            }
        }
    }

    static func failure(_ error: any Error) -> StrataStore.Failure? {
        (error as? VarlinkError).flatMap(StrataStore.Failure.init)
    }

    /// The objects of `fleet` as a client of `version` sees them, by `key`.
    static func aircraft(_ rig: Rig, version: String?, key: String) async throws -> [String: [String: JSONValue]] {
        let reply = try await rig.data(StrataStore.Fetch.self, .init(store: "fleet", entity: "Aircraft", version: version))
        var result: [String: [String: JSONValue]] = [:]
        for case .object(let object) in reply.objects {
            if case .string(let id)? = object[key] { result[id] = object }
        }
        return result
    }

    // MARK: - A live upgrade

    /// The store moves from Fleet 1 to Fleet 2 by a reload while two clients of Fleet 1 keep
    /// writing (a renamed key in predicates, a removed attribute, Batches); clients of Fleet 2
    /// join. No call fails, every acknowledged write is there under both versions' names, the
    /// cleanup that drops what Fleet 1 uses is held and says why, and is released when the
    /// last Fleet 1 client goes quiet for rollout.grace — after which Fleet 1 is refused,
    /// naming what the cleanup dropped. The versions a store cannot serve are refused, each
    /// with its reason.
    @Test func liveUpgradeServesBothVersionsAndHoldsTheCleanup() async throws {
        let rig = try Rig()
        defer { rig.sandbox.remove() }
        let daemon = try await rig.start(version: "Fleet 1")
        defer { daemon.signal(SIGKILL) }
        let ledger = Ledger()
        var clients = [Self.client("old-a", version: "Fleet 1", old: true, socket: rig.sandbox.dataSocket, ledger: ledger),
                       Self.client("old-b", version: "Fleet 1", old: true, socket: rig.sandbox.dataSocket, ledger: ledger)]
        try await ledger.waitUntil { ledger.writes("old-a") >= 10 && ledger.writes("old-b") >= 10 }

        // The roll-out: the daemon's configuration moves the store, a reload applies it.
        try rig.writeConfig(version: "Fleet 2")
        let reload = try await rig.admin(StrataAdmin.Reload.self, VarlinkEmpty())
        #expect(reload.closed == ["fleet"] && reload.opened == ["fleet"])
        clients += [Self.client("new-a", version: "Fleet 2", old: false, socket: rig.sandbox.dataSocket, ledger: ledger),
                    Self.client("new-b", version: nil, old: false, socket: rig.sandbox.dataSocket, ledger: ledger)]
        // Both versions write side by side: each client at least 10 more writes.
        let oldAtReload = ledger.writes("old")
        try await ledger.waitUntil { ledger.writes("new-a") >= 10 && ledger.writes("new-b") >= 10 && ledger.writes("old") >= oldAtReload + 20 }
        ledger.stop.store(true, ordering: .relaxed)
        for client in clients { await client.value }
        #expect(ledger.errors.withLock { $0 }.isEmpty, "\(ledger.errors.withLock { $0 }.prefix(5))\n\(daemon.log.suffix(3000))")
        #expect(ledger.writes("new-a") >= 10 && ledger.writes("new-b") >= 10 && ledger.writes("old") >= oldAtReload + 20)

        // Every acknowledged write, under each version's names.
        let written = ledger.written.withLock { $0 }
        let old = try await Self.aircraft(rig, version: "Fleet 1", key: "registration")
        let new = try await Self.aircraft(rig, version: "Fleet 2", key: "tailNumber")
        #expect(old.count == new.count && old.count == written.count + 20)
        for (id, photo) in written {
            #expect(old[id]?["photo"] == (photo.map { .string($0) } ?? .null), "\(id) as Fleet 1 sees it: \(old[id] ?? [:])")
            #expect(old[id]?["colour"] == nil, "Fleet 2's colour is invisible to Fleet 1")
            #expect(new[id]?["photo"] == nil, "Fleet 1's photo is invisible to Fleet 2")
            let colour = new[id]?["colour"]
            #expect(id.hasPrefix("old") ? colour == .string("white") : (colour == .string("red") || colour == .string("blue")), "\(id): \(colour ?? .null)")
        }
        #expect(old["SEED-3"]?["photo"] == .string("seed-3.jpg"))
        // Fleet 1's removed entity is still there for it; Fleet 2 has none.
        let hangars = try await rig.data(StrataStore.Count.self, .init(store: "fleet", entity: "Hangar", version: "Fleet 1"))
        #expect(hangars.count == 1)

        // History in each version's names: a rename by Fleet 2 is `registration` to Fleet 1.
        let token = try await rig.data(StrataStore.History.self, .init(store: "fleet", since: 0, limit: 1)).latest
        let seed = try #require(new["SEED-0"]?["_pk"]?.intValue)
        _ = try await rig.data(StrataStore.Update.self, .init(store: "fleet", entity: "Aircraft", id: seed, values: ["tailNumber": "SEED-0b"]))
        let asOld = try await rig.data(StrataStore.History.self, .init(store: "fleet", since: token, limit: 10, version: "Fleet 1"))
        let asNew = try await rig.data(StrataStore.History.self, .init(store: "fleet", since: token, limit: 10))
        #expect(asOld.transactions.first?.changes.first?.properties == ["registration"])
        #expect(asNew.transactions.first?.changes.first?.properties == ["tailNumber"])

        // The cleanup that drops photo and Hangar is held for Fleet 1's clients, and says so.
        let pending = try await rig.admin(StrataAdmin.Pending.self, .init(store: "fleet")).stores[0].tasks
        let rewrite = try #require(pending.first { $0.kind == .rewriteTable })
        let drop = try #require(pending.first { $0.kind == .dropTable })
        #expect(rewrite.held?.hasPrefix("held: 1 client (") ?? false, "\(rewrite)")
        #expect(rewrite.held?.contains("connections) at Fleet 1, last call") ?? false, "\(rewrite)")
        #expect(rewrite.held?.contains("it uses Aircraft.photo") ?? false, "\(rewrite)")
        #expect(drop.held?.contains("it uses table Hangar") ?? false, "\(drop)")
        let status = try await rig.admin(StrataAdmin.Status.self, VarlinkEmpty())
        #expect(status.stores.first { $0.name == "fleet" }?.held?.hasPrefix("2 tasks held: 1 client (") ?? false,
                "\(status.stores.first { $0.name == "fleet" }?.held ?? "nil")")
        let clientsReply = try await rig.admin(StrataAdmin.Clients.self, .init(store: "fleet"))
        let olderClients = clientsReply.clients.filter { $0.version == "Fleet 1" && $0.named && $0.active && !$0.current && $0.calls >= 10 }
        #expect(olderClients.count == 2 && olderClients.allSatisfy { $0.pid == getpid() }, "\(clientsReply.clients)")
        #expect(clientsReply.grace == "10m")
        let metrics = try await rig.admin(StrataAdmin.Metrics.self, VarlinkEmpty()).text
        #expect(metrics.contains("strata_client_calls_total{store=\"fleet\",version=\"Fleet 1\"}"), "\(metrics.prefix(2000))")
        // The index build destroys nothing: never held (or built already, the daemon idle).
        #expect(pending.filter { $0.kind == .createIndex }.allSatisfy { $0.held == nil }, "\(pending)")
        // The scheduler (idle for 1 s by now) builds the index and leaves the held work.
        let held = Set(pending.filter { $0.held != nil }.map(\.id))
        let idleDeadline = ContinuousClock.now + .seconds(30)
        var left = pending
        while Set(left.map(\.id)) != held, ContinuousClock.now < idleDeadline {
            try await Task.sleep(for: .milliseconds(700))
            left = try await rig.admin(StrataAdmin.Pending.self, .init(store: "fleet")).stores[0].tasks
        }
        #expect(Set(left.map(\.id)) == held && !left.contains { $0.kind == .createIndex }, "\(left)\n\(daemon.log.suffix(2000))")

        // Versions the store cannot serve, each with its reason.
        try await Self.expectRefusal(rig, store: "fleet", version: "Fleet 3", current: "Fleet 2",
                                     reason: ["'Fleet 3' is newer than 'Fleet 2'", "set `version: Fleet 3` for store 'fleet'", "stratactl reload"])
        try await Self.expectRefusal(rig, store: "fleet", version: "Fleet 9", current: "Fleet 2",
                                     reason: ["'Fleet 9' is not a version of the store's model directory (versions: Fleet 1, Fleet 2, Fleet 3)"])
        try await Self.expectRefusal(rig, store: "typed", version: "Typed 1", current: "Typed 2", entity: "Item",
                                     reason: ["attribute Item.count changes type from int16 to int64 in the hop 'Typed 1' -> 'Typed 2'"])
        try await Self.expectRefusal(rig, store: "staged", version: "Staged 1", current: "Staged 2", entity: "Item",
                                     reason: ["the hop 'Staged 1' -> 'Staged 2' is the custom stage 'label items'"])

        // rollout.grace: refused out of range (named), then shortened live: the last Fleet 1
        // client goes quiet, the journal says so, the scheduler runs the released cleanup.
        await #expect(throws: VarlinkError.self) {
            do {
                _ = try await rig.admin(StrataAdmin.SetSetting.self, .init(key: "rollout.grace", value: "8d"))
            } catch let error as VarlinkError {
                guard case .invalidSetting(let invalid)? = StrataAdmin.Failure(error) else { throw error }
                #expect(invalid.key == "rollout.grace" && invalid.reason.contains("between 0s and 168h"), "\(invalid)")
                throw error
            }
        }
        #expect(try await rig.admin(StrataAdmin.GetSettings.self, .init(key: "rollout.grace")).settings.first?.value == "10m")
        let set = try await rig.admin(StrataAdmin.SetSetting.self, .init(key: "rollout.grace", value: "1s"))
        #expect(set.previous == "10m" && set.setting.value == "1s")
        #expect(await daemon.logContains("the last client of model version 'Fleet 1' went quiet; its held cleanup is runnable", within: .seconds(15)),
                "\(daemon.log.suffix(2000))")
        let deadline = ContinuousClock.now + .seconds(60)
        while try await !rig.admin(StrataAdmin.Pending.self, .init(store: "fleet")).stores[0].tasks.isEmpty, ContinuousClock.now < deadline {
            // Slowly: the scheduler's request_rate signal (5/s) counts these calls too.
            try await Task.sleep(for: .milliseconds(700))
        }
        #expect(try await rig.admin(StrataAdmin.Pending.self, .init(store: "fleet")).stores[0].tasks.isEmpty, "\(daemon.log.suffix(2000))")
        try await Self.expectRefusal(rig, store: "fleet", version: "Fleet 1", current: "Fleet 2",
                                     reason: ["was dropped by the deferred cleanup", "upgrade the client to 'Fleet 2'"])
        // Fleet 2's clients are served as before, every write still there.
        let after = try await Self.aircraft(rig, version: nil, key: "tailNumber")
        #expect(after.count == new.count)
    }

    // MARK: - A forced run

    /// While a Fleet 1 client is active, `stratactl finish-deferred --now` without `--force`
    /// (no terminal: a script) runs nothing, names the client (its pid) that would lose
    /// access and says to add --force; `pending`, `status` and `clients` show the hold. With
    /// `--force` the cleanup runs and Fleet 1 is refused afterwards, naming what was
    /// dropped. A client newer than the store is refused, and stratactl says how to move
    /// the store.
    @Test func forcedRunTakesTheHeldCleanupAfterSayingWhoLosesAccess() async throws {
        let rig = try Rig()
        defer { rig.sandbox.remove() }
        // The scheduler never runs here (idle_after 1h): only the forced run does.
        let daemon = try await rig.start(version: "Fleet 1", idleAfter: "1h")
        defer { daemon.signal(SIGKILL) }
        let inserted = try await rig.data(StrataStore.Insert.self, .init(
            store: "fleet", entity: "Aircraft", values: ["registration": "OLD-1", "photo": "p1"], version: "Fleet 1"))
        let id = try #require(inserted.object["_pk"]?.intValue)
        try rig.writeConfig(version: "Fleet 2", idleAfter: "1h")
        _ = try await rig.admin(StrataAdmin.Reload.self, VarlinkEmpty())
        _ = try await rig.data(StrataStore.Update.self, .init(store: "fleet", entity: "Aircraft", id: id, values: ["photo": "p2"], version: "Fleet 1"))

        // Observe at Fleet 1, filtered on the renamed key in Fleet 1's names: a Fleet 2
        // client's update of tailNumber arrives as a change of registration.
        let token = try await rig.data(StrataStore.History.self, .init(store: "fleet", since: 0, limit: 1)).latest
        let watcher = Task { () -> [String]? in
            do {
                try await VarlinkClient.withConnection(to: rig.sandbox.dataSocket) { data in
                    _ = try await data.callMore(StrataStore.Observe.self, .init(
                        store: "fleet", entities: ["Aircraft"], predicate: "registration BEGINSWITH 'NEW'", since: token, version: "Fleet 1")) { reply in
                        if let change = reply.transaction?.changes.first, change.kind == .update { throw Observed(properties: change.properties) }
                    }
                }
            } catch let observed as Observed {
                return observed.properties
            }
            return nil
        }
        let fresh = try await rig.data(StrataStore.Insert.self, .init(store: "fleet", entity: "Aircraft", values: ["tailNumber": "NEW-1"]))
        _ = try await rig.data(StrataStore.Update.self, .init(store: "fleet", entity: "Aircraft", id: try #require(fresh.object["_pk"]?.intValue),
                                                             values: ["tailNumber": "NEW-2"]))
        let observed = try await Self.within(.seconds(60)) { (try? await watcher.value) ?? nil }
        #expect(observed == ["registration"], "\(observed ?? [])")

        let me = "pid \(getpid())"
        let pending = try await rig.stratactl(["pending", "fleet"])
        #expect(pending.status == 0 && pending.output.contains("held: 1 client (") && pending.output.contains("at Fleet 1, last call"), "\(pending.output)")
        #expect(pending.output.contains("it uses Aircraft.photo") && pending.output.contains("it uses table Hangar"), "\(pending.output)")
        let status = try await rig.stratactl(["status"])
        #expect(status.output.contains("fleet: 2 tasks held: 1 client ("), "\(status.output)")
        let clients = try await rig.stratactl(["clients", "fleet"])
        #expect(clients.status == 0 && clients.output.contains("Fleet 1") && clients.output.contains(me) && clients.output.contains("rollout.grace (10m)"),
                "\(clients.output)")
        let clientsJSON = try await rig.stratactl(["clients", "fleet", "--json"])
        #expect(clientsJSON.output.contains("\"version\" : \"Fleet 1\"") || clientsJSON.output.contains("\"version\":\"Fleet 1\""), "\(clientsJSON.output)")

        // Without --force and without a terminal: nothing runs, and it says who would lose access.
        let refused = try await runCommandOffThread("/bin/sh", ["-c", "exec \"$0\" finish-deferred fleet --now --wait --socket \"$1\" </dev/null",
                                                                Paths.stratactl, rig.sandbox.adminSocket])
        #expect(refused.status == 1, "\(refused.output)")
        #expect(refused.output.contains("held for clients of an older model version") && refused.output.contains("Fleet 1: ") &&
                refused.output.contains(me) && refused.output.contains("add --force"), "\(refused.output)")
        let kinds = try await rig.admin(StrataAdmin.Pending.self, .init(store: "fleet")).stores[0].tasks.map(\.kind)
        #expect(kinds.contains(.rewriteTable) && kinds.contains(.dropTable), "\(kinds)")
        // The data socket's Admin twin: FinishDeferred with now and without force is refused by name.
        do {
            _ = try await rig.admin(StrataAdmin.FinishDeferred.self, .init(store: "fleet", wait: true, now: true))
            Issue.record("a forced run without force ran held work")
        } catch let error as VarlinkError {
            guard case .heldForClients(let held)? = StrataAdmin.Failure(error) else { throw error }
            #expect(held.store == "fleet" && held.tasks.count == 2 && held.clients.contains { $0.contains(me) }, "\(held)")
        }

        // With --force: it says who loses access, then runs.
        let forced = try await rig.stratactl(["finish-deferred", "fleet", "--now", "--force", "--wait"])
        #expect(forced.status == 0 && forced.output.contains(me) && forced.output.contains("fleet: "), "\(forced.output)")
        let after = try await rig.admin(StrataAdmin.Pending.self, .init(store: "fleet")).stores[0].tasks.map(\.kind)
        #expect(!after.contains(.rewriteTable) && !after.contains(.dropTable), "\(after)")
        try await Self.expectRefusal(rig, store: "fleet", version: "Fleet 1", current: "Fleet 2",
                                     reason: ["was dropped by the deferred cleanup", "upgrade the client to 'Fleet 2'"])
        // Fleet 2 sees the old client's row under its names.
        let row = try await rig.data(StrataStore.Fetch.self, .init(store: "fleet", entity: "Aircraft", predicate: "tailNumber == 'OLD-1'"))
        #expect(row.objects.count == 1)

        // A newer client: refused, and stratactl says how to move the store.
        let newer = try await runCommandOffThread(Paths.stratactl, ["watch", "fleet", "--version", "Fleet 3", "--data-socket", rig.sandbox.dataSocket])
        #expect(newer.status == 3 && newer.output.contains("VersionNotServed") && newer.output.contains("set `version: Fleet 3` for store 'fleet'") &&
                newer.output.contains("stratactl reload"), "\(newer.output)")
    }

    // MARK: - A crash

    /// The daemon is killed (SIGKILL) while clients of both versions write, right after the
    /// reload that moved the store; started again at Fleet 2, every acknowledged write is
    /// there under both versions' names and the cleanup is still pending, held again by the
    /// first Fleet 1 call.
    @Test func crashDuringTheRollOutLosesNoAcknowledgedWrite() async throws {
        let rig = try Rig()
        defer { rig.sandbox.remove() }
        let daemon = try await rig.start(version: "Fleet 1", idleAfter: "1h")
        defer { daemon.signal(SIGKILL) }
        let ledger = Ledger()
        var clients = [Self.client("old-a", version: "Fleet 1", old: true, socket: rig.sandbox.dataSocket, ledger: ledger)]
        try await ledger.waitUntil { ledger.writes("old") >= 10 }
        try rig.writeConfig(version: "Fleet 2", idleAfter: "1h")
        _ = try await rig.admin(StrataAdmin.Reload.self, VarlinkEmpty())
        clients += [Self.client("new-a", version: "Fleet 2", old: false, socket: rig.sandbox.dataSocket, ledger: ledger)]
        let oldAtReload = ledger.writes("old")
        try await ledger.waitUntil { ledger.writes("new") >= 10 && ledger.writes("old") >= oldAtReload + 10 }
        daemon.signal(SIGKILL)
        _ = await daemon.waitForExit()
        try await Task.sleep(for: .milliseconds(200))
        ledger.stop.store(true, ordering: .relaxed)
        for client in clients { await client.value }
        let written = ledger.written.withLock { $0 }
        #expect(written.keys.contains { $0.hasPrefix("new") } && written.keys.contains { $0.hasPrefix("old") }, "\(written.keys.sorted())")

        let again = try await rig.start(version: "Fleet 2", idleAfter: "1h")
        defer { again.signal(SIGKILL) }
        let old = try await Self.aircraft(rig, version: "Fleet 1", key: "registration")
        let new = try await Self.aircraft(rig, version: "Fleet 2", key: "tailNumber")
        #expect(old.count == new.count && old.count >= written.count + 20, "\(old.count) \(new.count) \(written.count)")
        for (id, photo) in written {
            // An update in flight at the kill may have committed unacknowledged (a `u-` photo).
            let seen = old[id]?["photo"]
            #expect(seen == (photo.map { .string($0) } ?? .null) || (seen?.stringValue?.hasPrefix("u-") ?? false),
                    "\(id) as Fleet 1 sees it: \(old[id] ?? [:])")
            #expect(new[id] != nil, "\(id) lost")
        }
        let pending = try await rig.admin(StrataAdmin.Pending.self, .init(store: "fleet")).stores[0].tasks
        #expect(pending.contains { $0.kind == .rewriteTable && ($0.held?.hasPrefix("held: 1 client") ?? false) }, "\(pending)")
    }

    struct Observed: Error {
        var properties: [String]
    }

    /// `body`'s result, or nil when it takes longer than `limit` (a generous bound: a test
    /// fails rather than hangs).
    static func within<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async -> T?) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { await body() }
            group.addTask { try await Task.sleep(for: limit); return nil }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Expects a `Fetch` of `entity` at `version` on `store` to be refused with
    /// `VersionNotServed` naming the store, the version, the current one and `reason`'s parts.
    static func expectRefusal(_ rig: Rig, store: String, version: String, current: String, entity: String = "Aircraft",
                              reason parts: [String]) async throws {
        do {
            _ = try await rig.data(StrataStore.Fetch.self, .init(store: store, entity: entity, version: version))
            Issue.record("\(store) served \(version)")
        } catch {
            guard case .versionNotServed(let refusal)? = failure(error) else {
                Issue.record("\(store) at \(version): \(error)")
                return
            }
            #expect(refusal.store == store && refusal.version == version && refusal.current == current, "\(refusal)")
            for part in parts { #expect(refusal.reason.contains(part), "\(refusal.reason)") }
        }
    }
}
