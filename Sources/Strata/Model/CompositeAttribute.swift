import Foundation

/// A named group of attributes stored inline in its entity, like Core Data's
/// `NSCompositeAttributeDescription` (WWDC 2023). Elements may themselves be composites;
/// relationships are not allowed inside.
///
/// Each leaf becomes its own column, named by its path with `_`: `colorScheme.primary` is
/// stored in the column `colorScheme_primary`, and can be indexed, sorted and queried by keypath.
public struct CompositeAttribute: Sendable, Hashable {
    /// The composite's name.
    public var name: String
    /// Its elements: attributes or nested composites.
    public var elements: [CompositeElement]
    /// Whether the whole composite may be absent.
    public var isOptional: Bool
    /// The name it had in an earlier version, for migration.
    public var renamingIdentifier: String?
    /// Free-form metadata (not part of the checksum).
    public var userInfo: [String: String]

    /// A composite attribute of `elements`.
    public init(
        _ name: String, elements: [CompositeElement], isOptional: Bool = true,
        renamingIdentifier: String? = nil, userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.elements = elements
        self.isOptional = isOptional
        self.renamingIdentifier = renamingIdentifier
        self.userInfo = userInfo
    }

    /// Every leaf attribute with its path relative to this composite (`["primary"]`, `["inner", "x"]`).
    public var leaves: [(path: [String], attribute: Attribute)] {
        var result: [(path: [String], attribute: Attribute)] = []
        for element in elements {
            switch element {
            case .attribute(let a): result.append(([a.name], a))
            case .composite(let c):
                for leaf in c.leaves { result.append(([c.name] + leaf.path, leaf.attribute)) }
            }
        }
        return result
    }
}
