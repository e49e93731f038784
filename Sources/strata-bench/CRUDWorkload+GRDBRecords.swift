import Foundation
import GRDB
import Strata

/// The CRUD scenario with GRDB's own Codable records (`FetchableRecord & PersistableRecord`)
/// and its query interface: the baseline of `crud --typed`, doing the typed side's work in
/// the same process — insert records, fetch by the indexed leaf (ordered by primary key, as
/// Strata's fetches are), update `flightHours` and the version of each, delete each.
final class GRDBRecordsCRUDWorkload: CRUDWorkload {
    let name = "GRDB records"
    let store: PersistentStore
    let data: CRUDDataSet
    private let database: DatabasePool
    private var prepared: [AircraftRecord] = []

    /// A row of the scenario's table as a Codable record (column names from Strata's layout).
    struct AircraftRecord: Codable, FetchableRecord, MutablePersistableRecord {
        static let databaseTableName = CRUDDataSet.entityName
        var id: Int64?
        var version: Int64
        var tailNumber: String
        var aircraftType: String?
        var seats: Int64?
        var flightHours: Double?
        var primary: String?
        var secondary: String?
        var tertiary: String?

        enum CodingKeys: String, CodingKey {
            case id = "_pk", version = "_version", tailNumber, aircraftType, seats, flightHours
            case primary = "colorScheme_primary", secondary = "colorScheme_secondary", tertiary = "colorScheme_tertiary"
        }

        enum Columns {
            static let id = Column(CodingKeys.id)
            static let primary = Column(CodingKeys.primary)
            static let flightHours = Column(CodingKeys.flightHours)
            static let version = Column(CodingKeys.version)
        }

        mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
    }

    init(store: PersistentStore, data: CRUDDataSet) {
        self.store = store
        self.data = data
        self.database = store.database
    }

    func insert(_ range: Range<Int>) throws {
        try database.write { db in
            for i in range {
                let row = data.row(i)
                var record = AircraftRecord(id: nil, version: 1, tailNumber: row.tailNumber, aircraftType: row.aircraftType, seats: row.seats,
                                            flightHours: row.flightHours, primary: row.primary, secondary: row.secondary, tertiary: row.tertiary)
                try record.insert(db)
            }
        }
    }

    func fetch(color: String) throws -> Int {
        let records = try database.read { db in
            try AircraftRecord.filter(AircraftRecord.Columns.primary == color).order(AircraftRecord.Columns.id).fetchAll(db)
        }
        var checksum = 0
        for record in records { checksum &+= Int(record.seats ?? 0) }
        return checksum
    }

    func prepareBatch(colors: [String]) throws {
        prepared = try database.read { db in
            try AircraftRecord.filter(colors.contains(AircraftRecord.Columns.primary)).order(AircraftRecord.Columns.id).fetchAll(db)
        }
    }

    func updatePrepared() throws -> Int {
        try database.write { db in
            for var record in prepared {
                record.flightHours = (record.flightHours ?? 0) + 1
                record.version += 1
                try record.update(db, columns: [AircraftRecord.Columns.flightHours, AircraftRecord.Columns.version])
            }
        }
        defer { prepared = [] }
        return prepared.count
    }

    func deletePrepared() throws -> Int {
        try database.write { db in
            for record in prepared { try record.delete(db) }
        }
        defer { prepared = [] }
        return prepared.count
    }

    func close() throws { try store.close() }
}

extension GRDBRecordsCRUDWorkload {
    func fetchAll() throws -> Int {
        let all = try database.read { db in try AircraftRecord.order(AircraftRecord.Columns.id).fetchAll(db) }
        var count = 0
        for record in all where record.seats != nil { count += 1 }
        return count
    }
}
