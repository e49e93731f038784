import Foundation
import StrataData

// The WWDC 2023 Aircraft story ("What's new in Core Data"), as versioned Swift schemas: the
// same three versions as config/models/Aircraft/*.yaml and the Aircraft.xcdatamodeld fixture.

/// The aircraft's colours: a composite attribute (three columns, colorScheme_primary, …).
@Composite
struct ColorScheme: Hashable, Codable {
    var primary: String?
    var secondary: String?
    var tertiary: String?
}

enum AircraftSchemaV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let versionName = "Aircraft 1"
    static var models: [any PersistentModel.Type] { [Aircraft.self] }

    @Model
    final class Aircraft {
        var tailNumber: String
        var aircraftType: String?
        var aircraftCategory: String?
        var aircraftClass: String?
        var photo: Data?
        var colorScheme: ColorScheme?
        #Index<Aircraft>([\.colorScheme?.primary], name: "byPrimaryColor")

        init(tailNumber: String, aircraftType: String? = nil, colorScheme: ColorScheme? = nil) {
            self.tailNumber = tailNumber
            self.aircraftType = aircraftType
            self.colorScheme = colorScheme
        }
    }
}

enum AircraftSchemaV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static let versionName = "Aircraft 2"
    static var models: [any PersistentModel.Type] { [Aircraft.self] }

    @Model
    final class Aircraft {
        var tailNumber: String
        var aircraftType: String?
        var aircraftCategory: String?
        var aircraftClass: String?
        var photo: Data?
        var colorScheme: ColorScheme?
        /// Flight recorder data, kept on the aircraft in version 2.
        var flightData: Data?
        #Index<Aircraft>([\.colorScheme?.primary], name: "byPrimaryColor")

        init(tailNumber: String, flightData: Data? = nil) {
            self.tailNumber = tailNumber
            self.flightData = flightData
        }
    }
}

enum AircraftSchemaV3: VersionedSchema {
    static let versionIdentifier = Schema.Version(3, 0, 0)
    static let versionName = "Aircraft 3"
    static var models: [any PersistentModel.Type] { [Aircraft.self, FlightData.self] }

    @Model
    final class Aircraft {
        var tailNumber: String
        var aircraftType: String?
        var aircraftCategory: String?
        var aircraftClass: String?
        var photo: Data?
        var colorScheme: ColorScheme?
        /// Version 3 moves the recorder data into its own entity.
        @Relationship(deleteRule: .cascade, inverse: \FlightData.aircraft)
        var flightParameters: [FlightData] = []
        #Index<Aircraft>([\.colorScheme?.primary], name: "byPrimaryColor")

        init(tailNumber: String, aircraftType: String? = nil, colorScheme: ColorScheme? = nil) {
            self.tailNumber = tailNumber
            self.aircraftType = aircraftType
            self.colorScheme = colorScheme
        }
    }

    @Model
    final class FlightData {
        var data: Data
        var aircraft: Aircraft?

        init(data: Data) { self.data = data }
    }
}
