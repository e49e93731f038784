import SwiftDiagnostics
import SwiftSyntax

/// A diagnostic of StrataData's macros: what is wrong with the declaration and what to write.
struct MacroError: Error, DiagnosticMessage {
    let message: String
    let diagnosticID = MessageID(domain: "StrataMacros", id: "error")
    let severity = DiagnosticSeverity.error

    init(_ message: String) { self.message = message }
}
