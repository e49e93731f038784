import Foundation
import StrataVarlink

/// Compares a ``VarlinkInterfaceDefinition``'s Swift types with an interface definition
/// (IDL): the same methods, each with the same parameters and reply fields of the same types,
/// the same errors with the same fields, and named types under the same names.
struct InterfaceConformance {
    let idl: VarlinkIDL
    private var shape = CodableShape()
    private(set) var differences: [String] = []
    /// Named types already compared (each is reported once).
    private var compared: Set<String> = []

    /// Compares `interface` with `idl`.
    init(_ interface: any VarlinkInterfaceDefinition.Type, idl: VarlinkIDL) throws {
        self.idl = idl
        if idl.name != interface.name { differences.append("interface: the IDL is \(idl.name), Swift \(interface.name)") }
        let swiftMethods = Dictionary(interface.methods.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for name in Set(idl.methods.keys).union(swiftMethods.keys).sorted() {
            guard let method = idl.methods[name] else { differences.append("method \(name): in Swift, not in the IDL"); continue }
            guard let type = swiftMethods[name] else { differences.append("method \(name): in the IDL, not in Swift"); continue }
            let (parameters, reply) = try Self.fields(of: type, &shape)
            compare(method.parameters, parameters, "method \(name) parameters")
            compare(method.reply, reply, "method \(name) reply")
        }
        let swiftErrors = Dictionary(interface.errors.map { ($0.errorName, $0) }, uniquingKeysWith: { first, _ in first })
        for name in Set(idl.errors.keys).union(swiftErrors.keys).sorted() {
            guard let fields = idl.errors[name] else { differences.append("error \(name): in Swift, not in the IDL"); continue }
            guard let type = swiftErrors[name] else { differences.append("error \(name): in the IDL, not in Swift"); continue }
            compare(fields, try shape.fields(of: type), "error \(name)")
        }
    }

    private static func fields<M: VarlinkMethod>(of method: M.Type, _ shape: inout CodableShape) throws -> ([VarlinkIDL.Field], [VarlinkIDL.Field]) {
        (try shape.fields(of: M.Parameters.self), try shape.fields(of: M.Reply.self))
    }

    private mutating func compare(_ idlFields: [VarlinkIDL.Field], _ swiftFields: [VarlinkIDL.Field], _ path: String) {
        let expected = Dictionary(idlFields.map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
        let actual = Dictionary(swiftFields.map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
        for name in Set(expected.keys).union(actual.keys).sorted() {
            switch (expected[name], actual[name]) {
            case (let idlType?, let swiftType?): compare(idlType, swiftType, "\(path).\(name)")
            case (_?, nil): differences.append("\(path).\(name): in the IDL, not in Swift")
            default: differences.append("\(path).\(name): in Swift, not in the IDL")
            }
        }
    }

    private mutating func compare(_ idlType: VarlinkIDL.TypeExpression, _ swiftType: VarlinkIDL.TypeExpression, _ path: String) {
        switch (idlType, swiftType) {
        case (.named(let idlName), .named(let swiftName)):
            guard idlName == swiftName else { return differences.append("\(path): the IDL's type \(idlName), Swift's \(swiftName)") }
            guard compared.insert(idlName).inserted else { return }
            guard let idlDefinition = idl.types[idlName], let swiftDefinition = shape.types[swiftName] else {
                return differences.append("\(path): type \(idlName) is not defined in the IDL")
            }
            guard case .structure(let idlFields) = idlDefinition, case .structure(let swiftFields) = swiftDefinition else {
                return differences.append("\(path): \(idlName) is \(idlDefinition) in the IDL, \(swiftDefinition) in Swift")
            }
            compare(idlFields, swiftFields, "type \(idlName)")
        case (.optional(let a), .optional(let b)), (.array(let a), .array(let b)), (.map(let a), .map(let b)):
            compare(a, b, path)
        default:
            if idlType != swiftType { differences.append("\(path): \(idlType) in the IDL, \(swiftType) in Swift") }
        }
    }
}
