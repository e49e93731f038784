import Foundation
import Testing

/// The Debian package (`make deb CONFIG=debug`, which `make test` runs before `swift test`)
/// installed with `dpkg -i` under a private systemd, on overlays of /etc, /usr and /var so
/// that the host is never changed: socket activation, a store under /var/lib/strata after
/// `systemctl reload`, the strata group on the data and admin sockets, the installed unit's
/// exposure, `systemctl stop` with STOPPING=1, and removal and purge keeping the data
/// (Tests/EndToEndTests/systemd/package-under-systemd.sh).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PackageInstallTests {
    /// Where `make deb CONFIG=debug` writes the package.
    static var packageDirectory: URL { Paths.packageRoot.appendingPathComponent(".build/deb/debug") }

    /// The newest `strata_*.deb` in ``packageDirectory``, if any.
    static func builtPackage() -> URL? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: packageDirectory.path)) ?? []
        let packages = names.filter { $0.hasPrefix("strata_") && $0.hasSuffix(".deb") }.map { packageDirectory.appendingPathComponent($0) }
        return packages.max { modificationDate($0) < modificationDate($1) }
    }

    static func modificationDate(_ url: URL) -> Date {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date) ?? .distantPast
    }

    /// `make test` runs this test on its own (`STRATA_PACKAGE_TEST=1 swift test --filter
    /// PackageInstallTests`) after the rest of the suite: dpkg and a private systemd load the
    /// machine, and timing-sensitive daemon tests must not run beside it.
    @Test func debianPackageUnderPrivateSystemd() async throws {
        guard ProcessInfo.processInfo.environment["STRATA_PACKAGE_TEST"] == "1" else {
            PrivateSystemd.reportSkipped("debianPackageUnderPrivateSystemd",
                                         "runs on its own: `make test`, or `STRATA_PACKAGE_TEST=1 swift test --filter PackageInstallTests` after `make deb CONFIG=debug`",
                                         machineCannotRun: false)
            return
        }
        guard let package = Self.builtPackage() else {
            Issue.record("no package in \(Self.packageDirectory.path): run `make deb CONFIG=debug` first (`make test` does)")
            return
        }
        let started = ContinuousClock.now
        let outcome = try await PrivateSystemd.run("package-under-systemd.sh", with: package)
        guard case .ran(let status, let output) = outcome else {
            if case .cannotRun(let reason) = outcome { PrivateSystemd.reportSkipped("debianPackageUnderPrivateSystemd", reason) }
            return
        }
        let result = (status: status, output: output)
        print("debianPackageUnderPrivateSystemd: \(package.lastPathComponent) in \(ContinuousClock.now - started)\n\(result.output)")
        #expect(result.status == 0 && result.output.contains("CHECK all ok"), "\(PrivateSystemd.failureReport(result.output))")
        for check in ["socket activation", "systemctl reload", "NotAuthorized on the admin socket", "systemd-analyze security",
                      "STOPPING=1", "dpkg -r stops the sockets", "dpkg --purge removes the configuration"] {
            #expect(result.output.contains(check), "missing check: \(check)")
        }
    }
}
