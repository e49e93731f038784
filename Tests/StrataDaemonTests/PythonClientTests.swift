import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// The Python `varlink` package (PyPI) as an outside client of both interfaces.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct PythonClientTests {
    @Test func pythonVarlinkClientCallsBothInterfaces() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/env"),
              (try? runCommand("/usr/bin/env", ["python3", "-c", "import varlink; varlink.Client"]))?.status == 0 else {
            print("SKIPPED pythonVarlinkClientCallsBothInterfaces: python3 with the varlink package is not available (pip install varlink)")
            return
        }
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig(dataAnyPeer: true)
        let daemon = try DaemonProcess(config: sandbox.configPath)
        try await waitForSocket(sandbox.adminSocket)
        let script = Paths.packageRoot.appendingPathComponent("Tests/EndToEndTests/python/varlink_client.py").path
        let result = try runCommand("/usr/bin/env", ["python3", script, sandbox.adminSocket, sandbox.dataSocket])
        #expect(result.status == 0 && result.output.contains("OK"), "\(result.output)\n\(daemon.log)")
        await daemon.stop()
    }
}
