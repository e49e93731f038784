import ArgumentParser
import Foundation
import Strata

/// `stratactl model …`: work with model files. (Placeholder; filled in by the model-files work.)
struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Validate model files and print their version checksums."
    )
}
