import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Model`: a `final class` becomes a persistent model. Generates the backing storage,
/// Observation's registrar, `init(backingData:)`, the schema metadata (entity, key-path table,
/// indexes), an accessor per persisted property (`@_PersistedProperty`) and the
/// `PersistentModel` and `Observable` conformances.
///
/// It reads the declaration's syntax only: whether a property is an attribute, a composite
/// or a relationship is decided by the type checker, through the overloads the generated
/// metadata calls.
public struct ModelMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    // MARK: - Members

    /// The backing storage, the registrar, `init(backingData:)`, `persistentBackingData` and the schema metadata.
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else {
            throw MacroError("@Model applies to a final class; use @Composite for a struct stored inside a model")
        }
        guard classDecl.modifiers.contains(where: { $0.name.text == "final" }) else {
            throw MacroError("@Model applies to a final class: add 'final' (model inheritance is not supported by StrataData; see docs/TypedModels.md)")
        }
        let className = classDecl.name.text
        let access = classDecl.modifiers.publicPrefix
        let stored = StoredProperty.all(in: classDecl.memberBlock.members)
        for property in stored where property.declaration.bindingSpecifier.text == "let" && !property.isTransient {
            context.diagnose(Diagnostic(node: property.declaration, message: MacroError("a persisted property of @Model class '\(className)' must be a 'var' ('\(property.name)'); mark it @Transient to keep it out of the model")))
        }
        let persisted = stored.filter { !$0.isTransient && $0.declaration.bindingSpecifier.text == "var" }
        for property in persisted where property.type == nil {
            context.diagnose(Diagnostic(node: property.declaration, message: MacroError("give the persisted property '\(property.name)' of '\(className)' an explicit type (var \(property.name): Type); the model is built from it")))
        }
        for property in stored where property.isTransient {
            if let binding = property.declaration.bindings.first(where: { $0.pattern.trimmedDescription == property.name }), binding.initializer == nil {
                context.diagnose(Diagnostic(node: property.declaration, message: MacroError("the @Transient property '\(property.name)' of '\(className)' needs a default value (a fetched model is made without your initializer)")))
            }
        }

        var decls: [DeclSyntax] = [
            "private var _$backing = StrataData.ModelBacking()",
            "@ObservationIgnored private let _$observationRegistrar = Observation.ObservationRegistrar()",
        ]
        for property in persisted {
            decls.append("private var _$\(raw: property.name): StrataData._StrataNoStorage")
        }
        let storageInits = persisted.map { "self._$\($0.name) = StrataData._StrataNoStorage()" }.joined(separator: "\n")
        decls.append("""
            \(raw: access)init(backingData: StrataData.ModelBacking) {
                self._$backing = backingData
                \(raw: storageInits)
            }
            """)
        decls.append("""
            \(raw: access)var persistentBackingData: StrataData.ModelBacking {
                get { _$backing }
                set { _$backing = newValue }
            }
            """)

        // The metadata: properties in declaration order (their ordinals), indexes, constraints.
        var properties: [String] = []
        for property in persisted {
            let keyPath = "\\\(className).\(property.name)"
            if let arguments = property.relationshipArguments {
                properties.append(".relationship(\(literal(property.name)), \(keyPath)\(arguments.isEmpty ? "" : ", " + arguments.trimmedDescription))")
            } else if let arguments = property.attributeArguments, !arguments.isEmpty {
                properties.append(".property(\(literal(property.name)), \(keyPath), \(arguments.trimmedDescription))")
            } else {
                properties.append(".property(\(literal(property.name)), \(keyPath))")
            }
        }
        var indexes: [String] = []
        var uniques: [String] = []
        for member in classDecl.memberBlock.members {
            guard let expansion = member.decl.as(MacroExpansionDeclSyntax.self) else { continue }
            let macro = expansion.macroName.text
            guard macro == "Index" || macro == "Unique" else { continue }
            let arguments = Array(expansion.arguments)
            guard let first = arguments.first?.expression.as(ArrayExprSyntax.self) else {
                context.diagnose(Diagnostic(node: expansion, message: MacroError("#\(macro) takes an array literal of key paths: #\(macro)<\(className)>([\\.a, \\.b])")))
                continue
            }
            var paths: [String] = []
            for element in first.elements {
                guard let path = keyPathString(element.expression) else {
                    context.diagnose(Diagnostic(node: element, message: MacroError("#\(macro) needs key path literals such as \\.colorScheme.primary")))
                    continue
                }
                paths.append(literal(path))
            }
            if macro == "Index" {
                let name = arguments.first { $0.label?.text == "name" }?.expression.trimmedDescription ?? "nil"
                indexes.append("(name: \(name), keyPaths: [\(paths.joined(separator: ", "))])")
            } else {
                uniques.append("[\(paths.joined(separator: ", "))]")
            }
        }
        decls.append("""
            \(raw: access)static let schemaMetadata = StrataData.ModelSchemaMetadata(
                entityName: \(raw: literal(className)),
                properties: [
                    \(raw: properties.joined(separator: ",\n"))
                ],
                indexes: [\(raw: indexes.joined(separator: ", "))],
                uniquenessConstraints: [\(raw: uniques.joined(separator: ", "))]
            )
            """)
        return decls
    }

    // MARK: - Member attributes

    /// `@_PersistedProperty(ordinal)` on each persisted stored property.
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard let classDecl = declaration.as(ClassDeclSyntax.self), let variable = member.as(VariableDeclSyntax.self),
              variable.bindingSpecifier.text == "var", variable.bindings.count == 1,
              let name = variable.bindings.first?.pattern.as(IdentifierPatternSyntax.self)?.identifier.text else { return [] }
        let persisted = StoredProperty.all(in: classDecl.memberBlock.members).filter { !$0.isTransient && $0.declaration.bindingSpecifier.text == "var" }
        guard let ordinal = persisted.firstIndex(where: { $0.name == name }), persisted[ordinal].type != nil else { return [] }
        return ["@StrataData._PersistedProperty(\(raw: ordinal))"]
    }

    // MARK: - Conformances

    /// The `PersistentModel` and `Observable` conformances.
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ClassDeclSyntax.self) else { return [] }
        let list = protocols.isEmpty ? ["StrataData.PersistentModel", "Observation.Observable"] : protocols.map(\.trimmedDescription)
        return [try ExtensionDeclSyntax("extension \(type.trimmed): \(raw: list.joined(separator: ", ")) {}")]
    }
}

/// A Swift string literal of `text`.
func literal(_ text: String) -> String {
    var escaped = ""
    for character in text {
        if character == "\\" || character == "\"" { escaped.append("\\") }
        escaped.append(character)
    }
    return "\"" + escaped + "\""
}

/// `colorScheme.primary` for `\.colorScheme.primary`, `\Aircraft.colorScheme?.primary`.
func keyPathString(_ expression: ExprSyntax) -> String? {
    guard let keyPath = expression.as(KeyPathExprSyntax.self) else { return nil }
    var names: [String] = []
    for component in keyPath.components {
        switch component.component {
        case .property(let property): names.append(property.declName.baseName.text)
        case .optional: continue
        default: return nil
        }
    }
    return names.isEmpty ? nil : names.joined(separator: ".")
}
