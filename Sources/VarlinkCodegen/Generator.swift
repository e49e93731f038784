import Foundation

/// Generates the Swift side of Strata's Varlink interfaces from `varlink/*.varlink`, the single
/// source of the interfaces, and the `.swift.json` notes beside each file: the named types,
/// each method's `Parameters` and `Reply`, each error's parameters and the typed `Failure`, and
/// the interface's name and the definition text that `org.varlink.service.GetInterfaceDescription`
/// serves (for io.strata.Admin, io.strata.Store and org.varlink.service itself).
///
/// The build runs it (the VarlinkCodegenPlugin build-tool plugin of StrataVarlink, through the
/// `strata-varlink-codegen` executable), so nothing generated is checked in and the Swift types
/// cannot drift from the `.varlink` files. A note about a name the IDL does not declare, a Swift
/// type of other optionality, or an error alias with other fields stops the build with an error
/// naming the declaration.
public enum Generator {
    /// The interfaces: the Varlink name and the Swift namespace it is generated into.
    public static let interfaces = [(varlink: "io.strata.Admin", swift: "StrataAdmin"), (varlink: "io.strata.Store", swift: "StrataStore"),
                                     (varlink: "org.varlink.service", swift: "VarlinkService")]

    /// The names of the files ``generate(varlinkDirectory:)`` returns, in its order.
    public static var outputNames: [String] {
        ["Definition", "Types", "Methods", "Errors"].flatMap { suffix in interfaces.map { "\($0.swift)+\(suffix).swift" } }
    }

    static let doNotEdit = ["// the build (Plugins/VarlinkCodegenPlugin) generates this file anew.", ""]

    /// The generated files (name and text) from the `.varlink` and `.swift.json` files in
    /// `varlinkDirectory`; throws a ``CodegenError`` that names the file or declaration.
    public static func generate(varlinkDirectory: URL) throws -> [(name: String, text: String)] {
        var texts: [String: String] = [:], idls: [String: IDLFile] = [:]
        for interface in interfaces {
            let file = "\(interface.varlink).varlink"
            let text: String
            do {
                text = try String(contentsOf: varlinkDirectory.appendingPathComponent(file), encoding: .utf8)
            } catch {
                throw CodegenError("\(file): cannot read it in \(varlinkDirectory.path) (\(error.localizedDescription))")
            }
            texts[interface.swift] = text
            idls[interface.swift] = try IDLFile(text: text, file: file)
            if idls[interface.swift]?.name != interface.varlink {
                throw CodegenError("\(file): declares `interface \(idls[interface.swift]?.name ?? "")`; the file's name says \(interface.varlink)")
            }
        }
        let writers = try interfaces.map { interface in
            let notesFile = "\(interface.varlink).swift.json"
            return SwiftWriter(interface: interface.varlink, swiftName: interface.swift, idl: idls[interface.swift]!,
                               notes: try Notes(contentsOf: varlinkDirectory.appendingPathComponent(notesFile), name: notesFile), idls: idls)
        }
        var outputs = writers.map { ("\($0.swiftName)+Definition.swift", $0.definition(texts[$0.swiftName]!)) }
        outputs += try writers.map { ("\($0.swiftName)+Types.swift", try $0.types()) }
        outputs += try writers.map { ("\($0.swiftName)+Methods.swift", try $0.methods()) }
        outputs += try writers.map { ("\($0.swiftName)+Errors.swift", try $0.errors()) }
        return outputs
    }
}
