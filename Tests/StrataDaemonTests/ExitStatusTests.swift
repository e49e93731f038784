import ArgumentParser
import Foundation
import Strata
import StrataVarlink
import Testing
@testable import stratactl

/// `stratactl`'s one error → exit status table (docs/CLI.md#exit-status), for every kind of
/// error its commands meet: offline, daemon and import-coredata.
@Suite("stratactl exit statuses")
struct ExitStatusTests {
    static func status(_ error: any Error) -> Int32 { ExitStatus.code(for: error).rawValue }

    @Test("daemon errors: unreachable 4, not authorized 5, no such store or setting 6, invalid 7, else 1")
    func daemonErrors() {
        #expect(Self.status(VarlinkClient.ClientError.cannotConnect(path: "/run/strata/admin.sock", reason: "No such file or directory")) == 4)
        #expect(Self.status(VarlinkError.permissionDenied()) == 5)
        #expect(Self.status(VarlinkError("io.strata.Varlink.NotAuthorized")) == 5)
        #expect(Self.status(StrataAdmin.Failure.noSuchStore(.init(store: "x", known: ["a"])).varlinkError) == 6)
        #expect(Self.status(StrataAdmin.Failure.unknownSetting(.init(key: "k", known: ["idle_after"])).varlinkError) == 6)
        #expect(Self.status(StrataAdmin.Failure.invalidSetting(.init(key: "k", value: "v", reason: "r")).varlinkError) == 7)
        #expect(Self.status(VarlinkError("org.varlink.service.InvalidParameter", ["parameter": .string("store")])) == 7)
        #expect(Self.status(StrataAdmin.Failure.storeFailure(.init(store: "x", code: "sqlite", reason: "r")).varlinkError) == 1)
    }

    @Test("offline errors: store 1, usage 2, incompatible 3")
    func offlineErrors() {
        #expect(Self.status(StoreError(.notFound, path: "/x", "missing")) == 1)
        #expect(Self.status(StoreError(.incompatibleModel, path: "/x", "other model")) == 3)
        #expect(Self.status(UsageError("--limit -1")) == 2)
        #expect(Self.status(MigrationError(.notInferable, "no")) == 3)
        #expect(Self.status(StagedMigrationError(.notInferable, "no")) == 3)
        #expect(Self.status(ExitCode(9)) == 9, "an ExitCode keeps its status")
    }

    @Test("import-coredata: 10 to 14 for bad inputs, 3 for a refused migration", arguments: [
        (CoreDataImportError.Code.notSQLite, Int32(10)), (.notACoreDataStore, 11), (.invalidCoreDataMetadata, 11),
        (.unknownVersion, 12), (.ambiguousVersion, 12), (.layoutMismatch, 12), (.unreadableModel, 13),
        (.destinationExists, 14), (.migrationFailed, 3), (.storeNotFound, 1), (.damagedStore, 1),
    ])
    func importErrors(_ code: CoreDataImportError.Code, _ expected: Int32) {
        #expect(Self.status(CoreDataImportError(code, "reason")) == expected)
    }
}
