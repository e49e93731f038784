import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plug-in of StrataData's macros.
@main
struct StrataMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        ModelMacro.self,
        PersistedPropertyMacro.self,
        CompositeMacro.self,
        MarkerMacro.self,
        IndexMacro.self,
    ]
}
