import SwiftSyntax

/// A stored `var` of a `@Model` class or `@Composite` struct, as the macros read it.
struct StoredProperty {
    let name: String
    let type: TypeSyntax?
    let declaration: VariableDeclSyntax
    /// `@Attribute(…)` / `@Relationship(…)` arguments, if any.
    let attributeArguments: LabeledExprListSyntax?
    let relationshipArguments: LabeledExprListSyntax?
    let isTransient: Bool

    /// The stored properties of a member block: instance `var`/`let` bindings without
    /// accessors (computed properties and `static` ones are not stored).
    static func all(in members: MemberBlockItemListSyntax) -> [StoredProperty] {
        var result: [StoredProperty] = []
        for member in members {
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            if variable.modifiers.contains(where: { ["static", "class", "lazy"].contains($0.name.text) }) { continue }
            for binding in variable.bindings {
                guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else { continue }
                if let accessors = binding.accessorBlock {
                    // `{ get … }` or a getter body: computed; `willSet`/`didSet` observers: stored.
                    if case .accessors(let list) = accessors.accessors,
                       list.allSatisfy({ ["willSet", "didSet"].contains($0.accessorSpecifier.text) }) {
                    } else {
                        continue
                    }
                }
                let name = identifier.identifier.text
                if name.hasPrefix("_$") { continue }
                result.append(StoredProperty(
                    name: name, type: binding.typeAnnotation?.type, declaration: variable,
                    attributeArguments: Self.arguments(of: "Attribute", in: variable),
                    relationshipArguments: Self.arguments(of: "Relationship", in: variable),
                    isTransient: Self.hasAttribute("Transient", in: variable) || Self.hasAttribute("ObservationIgnored", in: variable)))
            }
        }
        return result
    }

    static func hasAttribute(_ name: String, in variable: VariableDeclSyntax) -> Bool {
        variable.attributes.contains { element in
            guard case .attribute(let attribute) = element else { return false }
            return attribute.attributeName.trimmedDescription == name || attribute.attributeName.trimmedDescription.hasSuffix("." + name)
        }
    }

    static func arguments(of name: String, in variable: VariableDeclSyntax) -> LabeledExprListSyntax? {
        for element in variable.attributes {
            guard case .attribute(let attribute) = element else { continue }
            let attributeName = attribute.attributeName.trimmedDescription
            guard attributeName == name || attributeName.hasSuffix("." + name) else { continue }
            if case .argumentList(let list) = attribute.arguments { return list }
            return LabeledExprListSyntax([])
        }
        return nil
    }
}

extension DeclModifierListSyntax {
    /// `public ` when the declaration is public or open, else nothing.
    var publicPrefix: String {
        contains { ["public", "open"].contains($0.name.text) } ? "public " : ""
    }
}
