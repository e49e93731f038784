import Foundation
import GRDB

/// Reads the values Core Data stores as Strata values.
///
/// | attribute type | Core Data column | read as |
/// |---|---|---|
/// | String | `VARCHAR` text | the text |
/// | Integer 16/32/64 | `INTEGER` | the integer (range-checked) |
/// | Double, Float | `FLOAT` | the number |
/// | Decimal | `DECIMAL` (integer, real or text) | the decimal |
/// | Boolean | `INTEGER` 0/1 | false/true |
/// | Date | `TIMESTAMP`: seconds since 2001-01-01 | the date (Strata stores seconds since 1970) |
/// | UUID | 16-byte `BLOB` (or text) | the UUID |
/// | URI | text (or UTF-8 bytes) | the absolute URL |
/// | Binary | `BLOB`; with external storage, a marker byte: `0x01` + the bytes, or `0x02` + the file name in `.<store>_SUPPORT/_EXTERNAL_DATA/` | the bytes |
/// | Transformable | `BLOB` | the archived bytes, unchanged |
struct CoreDataValueReader {
    /// `.<store name>_SUPPORT/_EXTERNAL_DATA/` next to the original store.
    let externalDataDirectory: URL
    /// The original store's path, for messages.
    let store: String

    /// Core Data's reference date (2001-01-01) in Unix time.
    static let referenceDateOffset: TimeInterval = 978_307_200

    /// The directory Core Data keeps externally stored binary data of the store at `url` in.
    static func externalDataDirectory(forStoreAt url: URL) -> URL {
        let name = url.deletingPathExtension().lastPathComponent
        return url.deletingLastPathComponent().appending(path: ".\(name)_SUPPORT/_EXTERNAL_DATA", directoryHint: .isDirectory)
    }

    /// Converts one stored value of `attribute` (`entity.keyPath` of object `pk`).
    func value(_ stored: DatabaseValue, attribute: Attribute, entity: String, keyPath: String, pk: Int64) throws(CoreDataImportError) -> Value {
        func invalid(_ what: String) -> CoreDataImportError {
            CoreDataImportError(.invalidValue, "the stored value (\(what)) is not a valid \(attribute.type.rawValue); fix it in the app, or make the attribute's type match the data", store: store, entity: entity, objectPrimaryKey: pk, property: keyPath)
        }
        let raw = stored.storage
        if case .null = raw { return .null }
        switch attribute.type {
        case .string:
            switch raw {
            case .string(let s): return .string(s)
            case .int64(let i): return .string(String(i))
            case .double(let d): return .string(String(d))
            case .blob(let data):
                guard let s = String(data: data, encoding: .utf8) else { throw invalid("\(data.count) bytes that are not UTF-8 text") }
                return .string(s)
            case .null: return .null
            }
        case .int16, .int32, .int64:
            let number: Int64?
            switch raw {
            case .int64(let i): number = i
            case .double(let d): number = d.rounded() == d && abs(d) < 9.2e18 ? Int64(d) : nil
            case .string(let s): number = Int64(s)
            default: number = nil
            }
            guard let number, attribute.type.integerRange!.contains(number) else { throw invalid(Self.describe(raw)) }
            return .int(number)
        case .double, .float:
            switch raw {
            case .int64(let i): return .double(Double(i))
            case .double(let d): return .double(d)
            case .string(let s): if let d = Double(s) { return .double(d) }
            default: break
            }
            throw invalid(Self.describe(raw))
        case .decimal:
            switch raw {
            case .int64(let i): return .decimal(Decimal(i))
            case .double(let d): return .decimal(Decimal(string: String(d), locale: Locale(identifier: "en_US_POSIX")) ?? Decimal(d))
            case .string(let s): if let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) { return .decimal(d) }
            default: break
            }
            throw invalid(Self.describe(raw))
        case .bool:
            switch raw {
            case .int64(let i): return .bool(i != 0)
            case .double(let d): return .bool(d != 0)
            default: throw invalid(Self.describe(raw))
            }
        case .date:
            switch raw {
            case .int64(let i): return .date(Date(timeIntervalSinceReferenceDate: Double(i)))
            case .double(let d): return .date(Date(timeIntervalSinceReferenceDate: d))
            default: throw invalid(Self.describe(raw))
            }
        case .uuid:
            switch raw {
            case .blob(let data) where data.count == 16:
                let b = [UInt8](data)
                return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
            case .string(let s):
                if let uuid = UUID(uuidString: s) { return .uuid(uuid) }
            default: break
            }
            throw invalid(Self.describe(raw))
        case .uri:
            let text: String?
            switch raw {
            case .string(let s): text = s
            case .blob(let data): text = String(data: data, encoding: .utf8)
            default: text = nil
            }
            guard let text, let url = URL(string: text), url.scheme != nil else { throw invalid(Self.describe(raw)) }
            return .uri(url)
        case .data:
            let bytes: Data
            switch raw {
            case .blob(let data): bytes = data
            case .string(let s): bytes = Data(s.utf8)
            default: throw invalid(Self.describe(raw))
            }
            guard attribute.userInfo[CoreDataModelImporter.externalStorageKey] == "YES" else { return .data(bytes) }
            return .data(try externalStorageValue(bytes, entity: entity, keyPath: keyPath, pk: pk))
        }
    }

    /// Unwraps a value of an attribute that allows external storage: `0x01` + the bytes
    /// inline, or `0x02` + the name of a file in the external data directory.
    func externalStorageValue(_ bytes: Data, entity: String, keyPath: String, pk: Int64) throws(CoreDataImportError) -> Data {
        guard let marker = bytes.first else { return bytes }
        switch marker {
        case 0x01:
            return Data(bytes.dropFirst())
        case 0x02:
            let name = String(decoding: bytes.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
            guard !name.isEmpty, !name.contains("/"), name != "..", name != "." else {
                throw CoreDataImportError(.invalidValue, "the external storage reference (\(bytes.count) bytes) names no file", store: store, entity: entity, objectPrimaryKey: pk, property: keyPath)
            }
            let file = externalDataDirectory.appending(path: name)
            guard FileManager.default.fileExists(atPath: file.path) else {
                throw CoreDataImportError(.missingExternalData, "the value is stored outside the database, in \(file.path), which does not exist; copy the store's .\(externalDataDirectory.deletingLastPathComponent().lastPathComponent) directory (hidden, next to the store) along with it", store: store, entity: entity, objectPrimaryKey: pk, property: keyPath)
            }
            do {
                return try Data(contentsOf: file)
            } catch {
                throw CoreDataImportError(.io, "cannot read the externally stored value \(file.path): \(error.localizedDescription)", store: store, entity: entity, objectPrimaryKey: pk, property: keyPath)
            }
        default:
            return bytes  // written before the attribute allowed external storage
        }
    }

    static func describe(_ storage: DatabaseValue.Storage) -> String {
        switch storage {
        case .null: return "NULL"
        case .int64(let i): return "integer \(i)"
        case .double(let d): return "real \(d)"
        case .string(let s): return "text \"\(s.prefix(40))\(s.count > 40 ? "…" : "")\""
        case .blob(let d): return "\(d.count)-byte blob"
        }
    }
}
