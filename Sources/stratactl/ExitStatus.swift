import ArgumentParser
import Foundation
import Strata

/// The exit statuses of `stratactl`, as the root command's discussion lists them.
///
/// | status | meaning |
/// |---|---|
/// | 0 | success |
/// | 1 | failure: a missing, unreadable, foreign, truncated, corrupt or locked store; `inspect --check` found problems |
/// | 2 | usage: bad options or values, an unknown entity or keypath, a bad predicate or sort key |
/// | 3 | the store or model is incompatible: written by a newer Strata, or needs migration |
enum ExitStatus {
    static let failure = ExitCode(1)
    static let usage = ExitCode(2)
    static let incompatible = ExitCode(3)

    /// The status for an error thrown while running an offline command.
    static func code(for error: any Error) -> ExitCode {
        switch error {
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
        case is MigrationError:
            return incompatible
        case is UsageError, is ModelError:
            return error is UsageError ? usage : failure
        case let error as LineError:
            return code(for: error.underlying)
        default:
            return failure
        }
    }

    /// Writes `stratactl: MESSAGE` to standard error and returns the exit code to throw.
    static func fail(_ error: any Error) -> ExitCode {
        let message = String(describing: error)
        FileHandle.standardError.write(Data("stratactl: \(message)\n".utf8))
        return code(for: error)
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
