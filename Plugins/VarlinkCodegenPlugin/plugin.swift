import Foundation
import PackagePlugin

/// Generates StrataVarlink's interface types from the package's `varlink/*.varlink` files and
/// their `.swift.json` notes (strata-varlink-codegen), so the `.varlink` files are the single
/// source of the interfaces: the build regenerates the Swift whenever one of them changes.
@main
struct VarlinkCodegenPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let varlink = context.package.directoryURL.appending(path: "varlink")
        let output = context.pluginWorkDirectoryURL.appending(path: "Generated")
        let inputs = ["io.strata.Admin", "io.strata.Store"].flatMap { name in
            [varlink.appending(path: "\(name).varlink"), varlink.appending(path: "\(name).swift.json")]
        }
        let outputs = ["InterfaceDefinitions", "StrataAdmin+Types", "StrataStore+Types", "StrataAdmin+Methods", "StrataStore+Methods",
                       "StrataAdmin+Errors", "StrataStore+Errors"].map { output.appending(path: "\($0).swift") }
        return [
            .buildCommand(displayName: "Generating the Varlink interface types from varlink/",
                          executable: try context.tool(named: "strata-varlink-codegen").url,
                          arguments: [varlink.path, output.path],
                          inputFiles: inputs, outputFiles: outputs),
        ]
    }
}
