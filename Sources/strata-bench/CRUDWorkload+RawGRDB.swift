import Foundation
import GRDB
import Strata

/// The CRUD scenario in raw GRDB: the SQL Strata runs for the same work, through cached
/// statements, with the same transactions, decoding rows into a plain struct.
final class RawGRDBCRUDWorkload: CRUDWorkload {
    let name = "raw GRDB"
    let store: PersistentStore
    let data: CRUDDataSet
    private let database: DatabasePool
    private var prepared: [(pk: Int64, version: Int64, flightHours: Double)] = []

    /// Strata's statements for this model, taken from the library where it exposes them.
    private let fetchSQL: String
    private let selectSQLPrefix: String
    private let table: String
    private let insertSQL: String
    private let updateSQL: String
    private let deleteSQL: String
    /// Positions of the columns in `fetchSQL`'s result (the table's columns, in layout order).
    private let position: [String: Int]

    /// A decoded row.
    struct Aircraft {
        var pk: Int64
        var version: Int64
        var tailNumber: String
        var aircraftType: String?
        var seats: Int64?
        var flightHours: Double?
        var primary: String?
        var secondary: String?
        var tertiary: String?
    }

    init(store: PersistentStore, data: CRUDDataSet) throws {
        self.store = store
        self.data = data
        self.database = store.database
        table = store.layout.entity(CRUDDataSet.entityName)!.table.quotedDatabaseIdentifier
        // The exact SELECT Strata compiles for the fetch predicate.
        fetchSQL = try FetchQuery.select(
            FetchRequest(entityName: CRUDDataSet.entityName, predicate: try FetchPredicate(format: CRUDDataSet.fetchFormat, "x")),
            layout: store.layout).sql
        selectSQLPrefix = "SELECT \"_pk\", \"_version\", \"flightHours\" FROM \(table) WHERE \"colorScheme_primary\" IN "
        // Strata's INSERT: _pk, then attribute columns sorted by keypath (_version defaults to 1).
        insertSQL = "INSERT INTO \(table) (\"_pk\", \"aircraftType\", \"colorScheme_primary\", \"colorScheme_secondary\", \"colorScheme_tertiary\", \"flightHours\", \"seats\", \"tailNumber\") VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        updateSQL = "UPDATE \(table) SET \"flightHours\" = ?, \"_version\" = \"_version\" + 1 WHERE \"_pk\" = ? AND \"_version\" = ?"
        deleteSQL = "DELETE FROM \(table) WHERE \"_pk\" = ? AND \"_version\" = ?"
        let columns = store.layout.table(forEntity: CRUDDataSet.entityName)!.columns.map(\.name)
        position = Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1, $0) })
    }

    func insert(_ range: Range<Int>) throws {
        try database.write { db in
            var pk = (try Int64.fetchOne(db, sql: "SELECT coalesce(max(\"_pk\"), 0) FROM \(table)") ?? 0) + 1
            let statement = try db.cachedStatement(sql: insertSQL)
            for i in range {
                let row = data.row(i)
                try statement.execute(arguments: [pk, row.aircraftType, row.primary, row.secondary, row.tertiary,
                                                  row.flightHours, row.seats, row.tailNumber])
                pk += 1
            }
        }
    }

    func fetch(color: String) throws -> Int {
        let p = columnPositions
        let objects = try database.read { db in
            let statement = try db.cachedStatement(sql: fetchSQL)
            statement.arguments = [color]
            var result: [Aircraft] = []
            let rows = try Row.fetchCursor(statement)
            while let row = try rows.next() {
                result.append(Aircraft(pk: row[p.pk], version: row[p.version], tailNumber: row[p.tailNumber],
                                       aircraftType: row[p.aircraftType], seats: row[p.seats], flightHours: row[p.flightHours],
                                       primary: row[p.primary], secondary: row[p.secondary], tertiary: row[p.tertiary]))
            }
            return result
        }
        var checksum = 0
        for object in objects { checksum &+= Int(object.seats ?? 0) }
        return checksum
    }

    /// Column positions resolved once, as a hand-written `FetchableRecord` would hard-code them.
    private var columnPositions: (pk: Int, version: Int, tailNumber: Int, aircraftType: Int, seats: Int, flightHours: Int,
                                  primary: Int, secondary: Int, tertiary: Int) {
        (position["_pk"]!, position["_version"]!, position["tailNumber"]!, position["aircraftType"]!, position["seats"]!,
         position["flightHours"]!, position["colorScheme_primary"]!, position["colorScheme_secondary"]!,
         position["colorScheme_tertiary"]!)
    }

    func prepareBatch(colors: [String]) throws {
        let sql = selectSQLPrefix + "(" + Array(repeating: "?", count: colors.count).joined(separator: ", ") + ")"
        prepared = try database.read { db in
            try Row.fetchAll(db, sql: sql, arguments: StatementArguments(colors)).map { ($0[0], $0[1], $0[2] ?? 0) }
        }
    }

    func updatePrepared() throws -> Int {
        try database.write { db in
            let statement = try db.cachedStatement(sql: updateSQL)
            for row in prepared {
                try statement.execute(arguments: [row.flightHours + 1, row.pk, row.version])
                if db.changesCount == 0 { throw DatabaseError(message: "conflict on row \(row.pk)") }
            }
        }
        defer { prepared = [] }
        return prepared.count
    }

    func deletePrepared() throws -> Int {
        try database.write { db in
            let statement = try db.cachedStatement(sql: deleteSQL)
            for row in prepared {
                try statement.execute(arguments: [row.pk, row.version])
                if db.changesCount == 0 { throw DatabaseError(message: "conflict on row \(row.pk)") }
            }
        }
        defer { prepared = [] }
        return prepared.count
    }

    func close() throws { try store.close() }
}
