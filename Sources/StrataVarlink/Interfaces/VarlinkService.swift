import Foundation

/// `org.varlink.service`, the introspection interface every Varlink service implements:
/// `GetInfo` and `GetInterfaceDescription`, typed. ``VarlinkDispatcher`` serves it for the
/// interfaces of its socket; its errors are ``VarlinkError``'s `org.varlink.service` ones.
public enum VarlinkService: VarlinkInterfaceDefinition {
    // Generated from varlink/org.varlink.service.varlink at build time (VarlinkCodegenPlugin): the
    // name and definition, the methods (`GetInfo`, `GetInterfaceDescription`) and the errors.

    // MARK: - Serving

    /// The interface as a socket serves it: `info` and the interfaces (name and definition).
    static func table(info: VarlinkDispatcher.ServiceInfo, interfaces: [any VarlinkInterface]) -> VarlinkMethodTable<VarlinkService> {
        let names = [name] + interfaces.map(\.name)
        let definitions = Dictionary(interfaces.map { ($0.name, $0.definition) }, uniquingKeysWith: { $1 }).merging([name: definition]) { $1 }
        var table = VarlinkMethodTable<VarlinkService>(translatingErrors: { _ in nil })
        table.on(GetInfo.self) { _, _, _ in
            GetInfo.Reply(vendor: info.vendor, product: info.product, version: info.version, url: info.url, interfaces: names)
        }
        table.on(GetInterfaceDescription.self) { parameters, _, _ in
            guard let description = definitions[parameters.interface] else { throw VarlinkError.interfaceNotFound(parameters.interface) }
            return GetInterfaceDescription.Reply(description: description)
        }
        return table
    }
}
