import SwiftSyntax
import SwiftSyntaxMacros

/// `@Attribute`, `@Relationship`, `@Transient`: markers read by `@Model`; they expand to nothing.
public struct MarkerMacro: PeerMacro {
    /// Nothing: `@Model` reads the attribute.
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] { [] }
}

/// `#Index<T>([…])` and `#Unique<T>([…])`: declarations read by `@Model`; they expand to nothing.
public struct IndexMacro: DeclarationMacro {
    /// Nothing (after checking the argument is an array literal): `@Model` reads the declaration.
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard node.arguments.first?.expression.is(ArrayExprSyntax.self) == true else {
            throw MacroError("#\(node.macroName.text) takes an array literal of key paths, as in #\(node.macroName.text)<Aircraft>([\\.colorScheme.primary])")
        }
        return []
    }
}
