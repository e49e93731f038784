import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// stratad spawned with NOTIFY_SOCKET pointing at a datagram socket the test owns.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct NotifyTests {
    @Test func readyStatusWatchdogReloadStopping() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig()
        let notify = NotifyListener(path: sandbox.path("notify.sock"))
        defer { notify.close() }
        let daemon = try DaemonProcess(config: sandbox.configPath, environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "600000"])

        let ready = await notify.wait { $0.contains("READY=1") }
        #expect(ready?.contains("STATUS=1 store ready") == true, "READY message: \(ready ?? "none")\n\(daemon.log)")
        // READY only after the stores are open: the store file exists and is reported ready.
        #expect(FileManager.default.fileExists(atPath: sandbox.path("aircraft.sqlite")))
        let firstReady = notify.all.firstIndex { $0.contains("READY=1") }!
        #expect(notify.all[..<firstReady].contains { $0.contains("STATUS=opening 1 store") })
        #expect(daemon.log.range(of: "store ready")!.lowerBound < daemon.log.range(of: "notice stratad: ready")!.lowerBound)

        // Watchdog pings at a third of WATCHDOG_USEC.
        try await Task.sleep(for: .milliseconds(900))
        #expect(notify.all.filter { $0 == "WATCHDOG=1" }.count >= 2, "messages: \(notify.all)")

        // SIGHUP: RELOADING=1 with MONOTONIC_USEC, then READY=1 again.
        let readyCount = notify.all.filter { $0.contains("READY=1") && !$0.contains("RELOADING") }.count
        daemon.signal(SIGHUP)
        let reloading = await notify.wait { $0.contains("RELOADING=1") }
        #expect(reloading?.contains("MONOTONIC_USEC=") == true)
        let again = await notify.wait(timeout: .seconds(10)) { _ in
            notify.all.filter { $0.contains("READY=1") && !$0.contains("RELOADING") }.count > readyCount
        }
        #expect(again != nil, "no READY=1 after reload: \(notify.all)")

        // SIGTERM: STOPPING=1 and a clean exit.
        daemon.signal(SIGTERM)
        #expect(await notify.wait { $0.contains("STOPPING=1") } != nil)
        #expect(await daemon.waitForExit() == 0, "log:\n\(daemon.log)")
    }

    @Test func failedStoreIsReportedAndOthersServe() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try Data("this is not a database, not at all, no".utf8).write(to: URL(fileURLWithPath: sandbox.path("broken.sqlite")))
        try sandbox.writeConfig(stores: ["aircraft", "broken", "second"])
        let notify = NotifyListener(path: sandbox.path("notify.sock"))
        defer { notify.close() }
        let daemon = try DaemonProcess(config: sandbox.configPath, environment: ["NOTIFY_SOCKET": notify.path])
        let ready = await notify.wait { $0.contains("READY=1") }
        #expect(ready?.contains("STATUS=2 stores ready, 1 failed") == true, "\(ready ?? "none")\n\(daemon.log)")
        let stores = try await VarlinkClient.withConnection(to: sandbox.adminSocket) { admin in
            try await admin.call("io.strata.Admin.ListStores")["stores"]?.arrayValue ?? []
        }
        #expect(stores.map { $0["state"]?.stringValue } == ["ready", "failed", "ready"])
        #expect(stores[1]["error"]?.stringValue?.contains("notSQLite") == true)
        #expect(await daemon.logContains("store failed to open"))
        await daemon.stop()
    }

    @Test func refusedConfigurationExits78() throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try "stores:\n  - name: a\n    path: x.sqlite\n    modle: y\n".write(toFile: sandbox.configPath, atomically: true, encoding: .utf8)
        let result = try runCommand(Paths.stratad, ["--config", sandbox.configPath])
        #expect(result.status == 78)
        #expect(result.output.contains("stores[0].modle: unknown key; did you mean 'model'?"), "\(result.output)")
    }
}
