import SwiftSyntax
import SwiftSyntaxMacros

/// `@_PersistedProperty(ordinal)` (added by `@Model`): the property's init accessor (which
/// records the initial value in the backing), getter and setter, each going through the
/// model's backing storage by ordinal and Observation's registrar.
public struct PersistedPropertyMacro: AccessorMacro {
    /// The init accessor, getter and setter of one persisted property.
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self),
              let name = variable.bindings.first?.pattern.as(IdentifierPatternSyntax.self)?.identifier.text,
              case .argumentList(let arguments) = node.arguments, let ordinal = arguments.first?.expression.trimmedDescription else {
            return []
        }
        return [
            """
            @storageRestrictions(initializes: _$\(raw: name), accesses: _$backing)
            init(initialValue) {
                _$backing.initialize(\(raw: ordinal), initialValue)
                _$\(raw: name) = StrataData._StrataNoStorage()
            }
            """,
            """
            get {
                _$observationRegistrar.access(self, keyPath: \\.\(raw: name))
                return _$backing.getValue(\(raw: ordinal))
            }
            """,
            """
            set {
                _$observationRegistrar.withMutation(of: self, keyPath: \\.\(raw: name)) {
                    _$backing.setValue(\(raw: ordinal), newValue)
                }
            }
            """,
        ]
    }
}
