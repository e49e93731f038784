import Foundation
import StrataData

// A small fleet: airlines own planes (one-to-many), planes carry crews (one-to-many, ordered)
// and a composite livery with a nested composite. Used by the context and predicate tests.

@Composite
struct Trim: Hashable, Codable {
    var finish: String?
    var stripes: Int?
}

@Composite
struct Livery: Hashable, Codable {
    var primary: String?
    var secondary: String?
    var trim: Trim?
}

enum Category: String, CaseIterable, Codable, PersistentAttributeValue {
    case airliner, cargo, trainer
}

@Model
final class Airline {
    @Attribute(.unique) var name: String
    var founded: Date?
    @Relationship(deleteRule: .cascade, inverse: \Plane.airline)
    var planes: [Plane] = []

    init(name: String, founded: Date? = nil) {
        self.name = name
        self.founded = founded
    }
}

@Model
final class Plane {
    var tailNumber: String
    var seats: Int
    var flightHours: Double
    var inService: Bool
    var registered: Date?
    var serial: UUID?
    var category: Category
    var model: String?
    var livery: Livery?
    var airline: Airline?
    @Relationship(.ordered, deleteRule: .cascade, inverse: \CrewMember.plane)
    var crew: [CrewMember] = []
    @Transient var scratch = 0
    #Index<Plane>([\.livery?.primary])

    /// Not persisted: a computed property.
    var label: String { "\(tailNumber) (\(seats))" }

    init(tailNumber: String, seats: Int = 0, flightHours: Double = 0, inService: Bool = true, category: Category = .airliner,
         model: String? = nil, livery: Livery? = nil) {
        self.tailNumber = tailNumber
        self.seats = seats
        self.flightHours = flightHours
        self.inService = inService
        self.category = category
        self.model = model
        self.livery = livery
    }
}

@Model
final class CrewMember {
    var name: String
    var role: String
    var hours: Int
    var plane: Plane?

    init(name: String, role: String, hours: Int = 0) {
        self.name = name
        self.role = role
        self.hours = hours
    }
}

/// The fleet's schema and a store of it in a temporary directory.
enum Fleet {
    static let schema = Schema([Airline.self, Plane.self, CrewMember.self, Reading.self], version: "Fleet 1")

    static func store() throws -> PersistentStore {
        let url = try TestPaths.temporaryDirectory().appending(path: "fleet.sqlite")
        return try PersistentStore.open(at: url, model: try schema.objectModel())
    }
}

/// Every scalar type a property can have, optional or not.
@Model
final class Reading {
    var small: Int16
    var medium: Int32
    var large: Int64
    var ratio: Float
    var amount: Decimal
    var link: URL
    var blob: Data
    var at: Date
    var id: UUID
    var note: String?
    var maybeSmall: Int16?
    var maybeAmount: Decimal?

    init(small: Int16, medium: Int32, large: Int64, ratio: Float, amount: Decimal, link: URL, blob: Data, at: Date, id: UUID) {
        self.small = small
        self.medium = medium
        self.large = large
        self.ratio = ratio
        self.amount = amount
        self.link = link
        self.blob = blob
        self.at = at
        self.id = id
    }
}
