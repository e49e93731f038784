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
        // The interfaces (Generator.interfaces) and the files written for each (Generator.outputNames).
        let interfaces = ["io.strata.Admin": "StrataAdmin", "io.strata.Store": "StrataStore", "org.varlink.service": "VarlinkService"]
        let inputs = interfaces.keys.sorted().flatMap { name in
            [varlink.appending(path: "\(name).varlink"), varlink.appending(path: "\(name).swift.json")]
        }
        let outputs = interfaces.values.sorted().flatMap { swift in
            ["Definition", "Types", "Methods", "Errors"].map { output.appending(path: "\(swift)+\($0).swift") }
        }
        return [
            .buildCommand(displayName: "Generating the Varlink interface types from varlink/",
                          executable: try context.tool(named: "strata-varlink-codegen").url,
                          arguments: [varlink.path, output.path],
                          inputFiles: inputs, outputFiles: outputs),
        ]
    }
}
