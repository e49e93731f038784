import Strata

/// The model and the deterministic rows of the CRUD scenario: an Aircraft-like entity with a
/// composite attribute whose `primary` leaf is indexed.
struct CRUDDataSet {
    static let entityName = "Aircraft"
    static let fetchFormat = "colorScheme.primary == %@"
    static let selectFormat = "colorScheme.primary IN %@"

    static let model = ObjectModel(version: "Bench 1", entities: [
        Entity(
            entityName,
            attributes: [
                Attribute("tailNumber", .string, isOptional: false),
                Attribute("aircraftType", .string),
                Attribute("seats", .int32),
                Attribute("flightHours", .double),
            ],
            composites: [
                CompositeAttribute("colorScheme", elements: [
                    .attribute(Attribute("primary", .string)),
                    .attribute(Attribute("secondary", .string)),
                    .attribute(Attribute("tertiary", .string)),
                ]),
            ],
            indexes: [Index("byPrimaryColor", keyPaths: ["colorScheme.primary"])]
        ),
    ])

    /// One row's values.
    struct Row {
        var tailNumber: String
        var aircraftType: String
        var seats: Int64
        var flightHours: Double
        var primary: String
        var secondary: String
        var tertiary: String
    }

    let rows: Int
    let batchSize: Int
    /// Distinct primary colors: about 100 rows share each, whatever the row count.
    let colors: Int

    init(rows: Int, batchSize: Int) {
        self.rows = rows
        self.batchSize = batchSize
        self.colors = max(1, rows / 100)
    }

    private static let types = ["A320", "A321", "A350", "B737", "B777", "B787", "E190", "ATR72"]

    func row(_ i: Int) -> Row {
        Row(tailNumber: "N\(i)", aircraftType: Self.types[i % Self.types.count], seats: Int64(100 + i % 250),
            flightHours: Double(i % 10_000) * 1.5, primary: color(i % colors), secondary: color((i / 7) % colors),
            tertiary: "white")
    }

    func color(_ n: Int) -> String { "color-\(n)" }

    /// The insert batches: ranges of row numbers.
    var insertBatches: [Range<Int>] { stride(from: 0, to: rows, by: batchSize).map { $0..<min($0 + batchSize, rows) } }

    /// The color of the n-th fetch (spread over every color).
    func fetchColor(_ n: Int) -> String { color((n &* 7919) % colors) }

    /// Colors selecting about `batchSize` rows each, covering the first tenth of the colors
    /// (about 10% of the rows) for updates, the second tenth for deletes.
    var updateBatches: [[String]] { colorBatches(tenth: 0) }
    var deleteBatches: [[String]] { colorBatches(tenth: 1) }

    private func colorBatches(tenth: Int) -> [[String]] {
        let perTenth = max(1, colors / 10)
        let first = tenth * perTenth
        let rowsPerColor = max(1, rows / colors)
        let perBatch = max(1, batchSize / rowsPerColor)
        return stride(from: first, to: min(first + perTenth, colors), by: perBatch).map { start in
            (start..<min(start + perBatch, first + perTenth)).map(color)
        }
    }
}

/// One side of the CRUD scenario (Strata, or raw GRDB). Each call is timed by the caller;
/// `prepare…` calls are not timed.
protocol CRUDWorkload {
    var name: String { get }
    /// Inserts rows `range` in one transaction.
    func insert(_ range: Range<Int>) throws
    /// Fetches the objects whose primary color is `color`; returns a checksum of what was read.
    func fetch(color: String) throws -> Int
    /// Loads the rows with these primary colors (not timed).
    func prepareBatch(colors: [String]) throws
    /// Changes `flightHours` of every prepared row, in one transaction; returns the rows written.
    func updatePrepared() throws -> Int
    /// Deletes every prepared row, in one transaction; returns the rows written.
    func deletePrepared() throws -> Int
    func close() throws
    /// Fetches every object (typed runs: `crud --typed`); returns how many.
    func fetchAll() throws -> Int
}

extension CRUDWorkload {
    func fetchAll() throws -> Int { 0 }
}
