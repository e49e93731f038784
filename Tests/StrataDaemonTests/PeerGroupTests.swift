import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon

/// Group authorization uses the peer's own credentials (SO_PEERGROUPS), not the group
/// database: real processes with supplementary groups set or dropped (setpriv) call the
/// data socket of a stratad whose `/etc/group` (bind-mounted in its own mount namespace)
/// lists `nobody` as a member of the authorized group.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct PeerGroupTests {
    static let authorizedGroup = 4242

    /// A Count on the data socket as uid nobody with `credentials` (setpriv options); the
    /// reply's error name, or "ok".
    private func countAs(_ credentials: [String], socket: String) async throws -> String {
        let script = """
            import json, socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[1]); s.settimeout(10)
            s.sendall(b'{"method":"io.strata.Store.Count","parameters":{"store":"aircraft","entity":"Aircraft"}}\\0')
            reply = json.loads(s.recv(65536).rstrip(b'\\0'))
            print(reply.get("error", "ok"))
            """
        let result = try await runCommandOffThread("/usr/bin/setpriv", ["--reuid=65534"] + credentials + ["/usr/bin/python3", "-c", script, socket])
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func groupsComeFromThePeerNotFromTheGroupDatabase() async throws {
        let tools = ["/usr/bin/setpriv", "/usr/bin/python3", "/usr/bin/unshare", "/bin/mount"]
        guard getuid() == 0, tools.allSatisfy({ FileManager.default.isExecutableFile(atPath: $0) }) else {
            print("SKIPPED groupsComeFromThePeerNotFromTheGroupDatabase: needs root and \(tools.joined(separator: ", "))")
            return
        }
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: sandbox.directory.path)
        try sandbox.writeConfig(dataGroups: ["\(Self.authorizedGroup)"])
        // The daemon's view of the group database says nobody is a member: it must not matter.
        let groupFile = sandbox.path("group")
        let groups = try String(contentsOfFile: "/etc/group", encoding: .utf8)
        try (groups + "strata-test-peers:x:\(Self.authorizedGroup):nobody\n").write(toFile: groupFile, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(config: sandbox.configPath, wrapper: [
            "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
            "mount --bind \(groupFile) /etc/group && exec \"$0\" \"$@\"",
        ])
        try await waitForSocket(sandbox.adminSocket)
        defer { daemon.signal(SIGTERM) }

        // A supplementary group the group database does not list: accepted.
        #expect(try await countAs(["--regid=65534", "--groups=\(Self.authorizedGroup)"], socket: sandbox.dataSocket) == "ok", "\(daemon.log)")
        // The authorized group as primary group: accepted.
        #expect(try await countAs(["--regid=\(Self.authorizedGroup)", "--clear-groups"], socket: sandbox.dataSocket) == "ok")
        // Listed as a member in /etc/group but running with its groups dropped: refused.
        #expect(try await countAs(["--regid=65534", "--clear-groups"], socket: sandbox.dataSocket) == "io.strata.Varlink.NotAuthorized")
        // Another group: refused.
        #expect(try await countAs(["--regid=65534", "--groups=\(Self.authorizedGroup + 1)"], socket: sandbox.dataSocket) == "io.strata.Varlink.NotAuthorized")
        // Many groups (past a small buffer), the authorized one last and first in number order.
        let many = (5000..<5100).map(String.init) + ["\(Self.authorizedGroup)"]
        #expect(try await countAs(["--regid=65534", "--groups=\(many.joined(separator: ","))"], socket: sandbox.dataSocket) == "ok")
        let manyOthers = (5000..<5100).map(String.init) + ["0"]
        #expect(try await countAs(["--regid=65534", "--groups=\(manyOthers.joined(separator: ","))"], socket: sandbox.dataSocket) == "io.strata.Varlink.NotAuthorized")
        #expect(await daemon.logContains("refused peer"))
    }
}
