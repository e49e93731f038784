import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Composite`: a struct becomes a composite attribute type. Generates its element list
/// (attributes and nested composites, in declaration order: the leaves' order), an
/// initializer from the leaves and a writer of the leaves — no Codable, no JSON.
public struct CompositeMacro: ExtensionMacro {
    /// The extension with the composite's conformance, elements, reader and writer.
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let structDecl = declaration.as(StructDeclSyntax.self) else {
            throw MacroError("@Composite applies to a struct (its stored properties become the composite's elements)")
        }
        let typeName = structDecl.name.text
        let access = structDecl.modifiers.publicPrefix
        let stored = StoredProperty.all(in: structDecl.memberBlock.members)
        guard !stored.isEmpty else { throw MacroError("the composite '\(typeName)' has no stored property; a composite needs at least one element") }
        for property in stored where property.type == nil {
            throw MacroError("give the element '\(property.name)' of composite '\(typeName)' an explicit type (var \(property.name): Type)")
        }
        let elements = stored.map { ".element(\(literal($0.name)), \\\(typeName).\($0.name))" }.joined(separator: ",\n")
        let reads = stored.map { "self.\($0.name) = reader.next()" }.joined(separator: "\n")
        let writes = stored.map { "writer.write(self.\($0.name))" }.joined(separator: "\n")
        return [try ExtensionDeclSyntax("""
            extension \(type.trimmed): StrataData.CompositeAttributeValue {
                \(raw: access)static let compositeMetadata = StrataData.CompositeMetadata(typeName: \(raw: literal(typeName)), elements: [
                    \(raw: elements)
                ])
                \(raw: access)init(strataLeaves reader: inout StrataData.CompositeLeafReader) {
                    \(raw: reads)
                }
                \(raw: access)func strataWriteLeaves(to writer: inout StrataData.CompositeLeafWriter) {
                    \(raw: writes)
                }
            }
            """)]
    }
}
