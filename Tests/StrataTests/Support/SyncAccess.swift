import GRDB
@testable import Strata

extension PersistentStore {
    /// A synchronous read (inside async tests, GRDB would pick its async overload).
    func syncRead<T>(_ body: (Database) throws -> T) throws -> T { try database.read(body) }
    /// A synchronous write transaction.
    func syncWrite<T>(_ body: (Database) throws -> T) throws -> T { try database.write(body) }
}
