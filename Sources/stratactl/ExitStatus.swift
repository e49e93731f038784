import ArgumentParser
import Foundation
import Strata
import StrataVarlink

/// The exit statuses of `stratactl`: the one table that maps an error to a status, used by
/// every command (offline and daemon) and listed in docs/CLI.md and the root command's help.
///
/// | status | meaning |
/// |---|---|
/// | 0 | success |
/// | 1 | failure: a missing, unreadable, foreign, truncated, corrupt or locked store; `inspect --check` found problems; a failure the daemon reports |
/// | 2 | usage: bad options or values, an unknown entity or keypath, a bad predicate or sort key |
/// | 3 | the store or model is incompatible: written by a newer Strata, needs migration, or the migration is refused; a model version that cannot be served (`--version`, `VersionNotServed`) |
/// | 4 | the daemon is unreachable |
/// | 5 | the daemon refused the caller (not authorized) |
/// | 6 | the daemon has no such store or setting |
/// | 7 | the daemon refused a value or parameter |
/// | 10–14 | `import-coredata`'s bad inputs: not SQLite, not Core Data, unknown version, unreadable bundle, destination exists |
enum ExitStatus {
    // MARK: - The statuses

    static let failure = ExitCode(1)
    static let usage = ExitCode(2)
    static let incompatible = ExitCode(3)
    static let unreachable = ExitCode(4)
    static let notAuthorized = ExitCode(5)
    static let notFound = ExitCode(6)
    static let invalid = ExitCode(7)
    static let notSQLite = ExitCode(10)
    static let notCoreData = ExitCode(11)
    static let unknownCoreDataVersion = ExitCode(12)
    static let unreadableBundle = ExitCode(13)
    static let destinationExists = ExitCode(14)

    // MARK: - Error to status

    /// The status for an error thrown while running a command.
    static func code(for error: any Error) -> ExitCode {
        switch error {
        case let error as ExitCode:
            return error
        case let error as StoreError:
            switch error.code {
            case .incompatibleModel, .invalidMetadata, .migrationRefused: return incompatible
            default: return failure
            }
        case is FetchPredicateError:
            return usage
        case let error as ObjectContextError:
            if let storeError = error.storeError { return code(for: storeError) }
            switch error.code {
            case .unknownEntity, .unknownProperty, .abstractEntity, .typeMismatch: return usage
            default: return failure
            }
        case is MigrationError, is VersionBridgeError:
            return incompatible
        case let error as StagedMigrationError:
            switch error.code {
            case .storeVersionNotInChain, .noPath, .notInferable, .invalidObjects, .stageLeftInvalidObjects, .dropsEveryEntity, .discardsData: return incompatible
            default: return failure
            }
        case let error as CoreDataImportError:
            switch error.code {
            case .notSQLite: return notSQLite
            case .notACoreDataStore, .invalidCoreDataMetadata: return notCoreData
            case .unknownVersion, .ambiguousVersion, .layoutMismatch: return unknownCoreDataVersion
            case .unreadableModel: return unreadableBundle
            case .destinationExists: return destinationExists
            case .migrationFailed: return incompatible
            case .storeNotFound, .damagedStore, .missingExternalData, .invalidValue, .io: return failure
            }
        case is CoreDataMappingError:
            return incompatible
        case is UsageError:
            return usage
        case let error as LineError:
            return code(for: error.underlying)
        case is VarlinkClient.ClientError:
            return unreachable
        case let error as VarlinkError:
            return code(forDaemonError: error)
        default:
            return failure
        }
    }

    /// The status for an error reply of the daemon.
    static func code(forDaemonError error: VarlinkError) -> ExitCode {
        switch StrataAdmin.Failure(error) {
        case .noSuchStore?, .unknownSetting?: return notFound
        case .invalidSetting?: return invalid
        case .storeUnavailable?, .storeFailure?, .alreadyRunning?, .reloadFailed?, .heldForClients?: return failure
        case nil: break
        }
        switch error.name {
        case "io.strata.Varlink.NotAuthorized", "org.varlink.service.PermissionDenied": return notAuthorized
        case "org.varlink.service.InvalidParameter": return invalid
        default: return failure
        }
    }

    // MARK: - Reporting

    /// Writes `stratactl: MESSAGE` to standard error and returns the exit code to throw.
    static func fail(_ error: any Error) -> ExitCode {
        fail(String(describing: error), code: code(for: error))
    }

    /// Writes `stratactl: MESSAGE` to standard error and returns `code`, to throw.
    static func fail(_ message: String, code: ExitCode) -> ExitCode {
        FileHandle.standardError.write(Data("stratactl: \(message)\n".utf8))
        return code
    }

    /// Runs `body`, turning any error into a message on standard error and an exit status.
    static func reporting<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail(error)
        }
    }
}

/// A bad option value found while running a command (exit status 2). ArgumentParser's own
/// parse errors keep ArgumentParser's status.
struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
