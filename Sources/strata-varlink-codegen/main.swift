import Foundation
import VarlinkCodegen

// strata-varlink-codegen VARLINK_DIR OUTPUT_DIR: writes the Swift side of varlink/*.varlink
// (Generator.outputNames) into OUTPUT_DIR.
// The VarlinkCodegenPlugin build-tool plugin runs it for StrataVarlink; run by hand it shows
// what the build compiles.

let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--help") || arguments.count != 2 {
    print("""
        usage: strata-varlink-codegen VARLINK_DIR OUTPUT_DIR

        Generates StrataVarlink's interface types from VARLINK_DIR/io.strata.{Admin,Store}.varlink
        and the .swift.json notes beside them, writing \(Generator.outputNames.joined(separator: ", "))
        into OUTPUT_DIR. The build runs it (Plugins/VarlinkCodegenPlugin); exit status 1 and a
        message naming the declaration when the files disagree.
        """)
    exit(arguments.contains("--help") ? 0 : 2)
}
let input = URL(fileURLWithPath: arguments[arguments.startIndex])
let output = URL(fileURLWithPath: arguments[arguments.startIndex + 1])
do {
    try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
    for file in try Generator.generate(varlinkDirectory: input) {
        try file.text.write(to: output.appendingPathComponent(file.name), atomically: true, encoding: .utf8)
    }
} catch {
    FileHandle.standardError.write(Data("strata-varlink-codegen: error: \(error)\n".utf8))
    exit(1)
}
