import SwiftDiagnostics
import SwiftParser
import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import Testing

@testable import StrataMacros

/// The macros' expansions, read as source text, and their diagnostics for declarations they
/// cannot make a model of. (Compiling real models is the StrataDataTests' part.)
@Suite struct MacroExpansionTests {
    static let macros: [String: any Macro.Type] = [
        "Model": ModelMacro.self, "_PersistedProperty": PersistedPropertyMacro.self, "Composite": CompositeMacro.self,
        "Attribute": MarkerMacro.self, "Relationship": MarkerMacro.self, "Transient": MarkerMacro.self, "Index": IndexMacro.self,
    ]

    /// The expanded source and the diagnostics' messages.
    static func expand(_ source: String) -> (source: String, diagnostics: [String]) {
        let file = Parser.parse(source: source)
        let context = BasicMacroExpansionContext()
        let expanded = file.expand(macros: macros, in: context)
        return (expanded.description, context.diagnostics.map(\.message))
    }

    @Test func aModelGetsStorageMetadataAndAccessors() {
        let (source, diagnostics) = Self.expand("""
            @Model
            final class Aircraft {
                @Attribute(.unique, originalName: "tail") var tailNumber: String
                var colorScheme: ColorScheme?
                @Relationship(deleteRule: .cascade, inverse: \\FlightData.aircraft) var flights: [FlightData] = []
                @Transient var scratch = 0
                var label: String { tailNumber }
                #Index<Aircraft>([\\.colorScheme?.primary], name: "byPrimaryColor")
                init(tailNumber: String) { self.tailNumber = tailNumber }
            }
            """)
        #expect(diagnostics.isEmpty)
        #expect(source.contains("private var _$backing = StrataData.ModelBacking()"))
        #expect(source.contains(#".property("tailNumber", \Aircraft.tailNumber, .unique, originalName: "tail")"#))
        #expect(source.contains(#".property("colorScheme", \Aircraft.colorScheme)"#))
        #expect(source.contains(#".relationship("flights", \Aircraft.flights, deleteRule: .cascade, inverse: \FlightData.aircraft)"#))
        #expect(source.contains(#"indexes: [(name: "byPrimaryColor", keyPaths: ["colorScheme.primary"])]"#))
        #expect(!source.contains("\"scratch\"") && !source.contains("\"label\""))
        #expect(source.contains("@StrataData._PersistedProperty(0)") && source.contains("@StrataData._PersistedProperty(2)"))
        #expect(source.contains("@StrataData._PersistedProperty(3)") == false)   // the transient and computed ones get none
        #expect(source.contains("extension Aircraft: StrataData.PersistentModel, Observation.Observable"))
    }

    @Test func aPersistedPropertyGoesThroughTheBackingAndTheRegistrar() {
        let (source, diagnostics) = Self.expand("""
            final class Aircraft {
                @_PersistedProperty(2) var flights: [FlightData]
            }
            """)
        #expect(diagnostics.isEmpty)
        #expect(source.contains("@storageRestrictions(initializes: _$flights, accesses: _$backing)"))
        #expect(source.contains("_$backing.initialize(2, initialValue)"))
        #expect(source.contains("return _$backing.getValue(2)") && source.contains("_$backing.setValue(2, newValue)"))
        #expect(source.contains("_$observationRegistrar.access(self, keyPath: \\.flights)"))
        #expect(source.contains("_$observationRegistrar.withMutation(of: self, keyPath: \\.flights)"))
    }

    @Test func aCompositeGetsItsElementsReaderAndWriter() {
        let (source, diagnostics) = Self.expand("""
            @Composite
            struct ColorScheme {
                var primary: String?
                var trim: Trim?
                static let none = 0
            }
            """)
        #expect(diagnostics.isEmpty)
        #expect(source.contains(#".element("primary", \ColorScheme.primary)"#) && source.contains(#".element("trim", \ColorScheme.trim)"#))
        #expect(source.contains("self.trim = reader.next()") && source.contains("writer.write(self.primary)"))
        #expect(!source.contains("\"none\""))
    }

    @Test func declarationsThatCannotBeModelsAreDiagnosed() {
        #expect(Self.expand("@Model class Open { var a: Int }").diagnostics.contains { $0.contains("final class") })
        #expect(Self.expand("@Model struct S { var a: Int }").diagnostics.contains { $0.contains("@Composite") })
        #expect(Self.expand("@Model final class C { var a = 1 }").diagnostics.contains { $0.contains("explicit type") })
        #expect(Self.expand("@Model final class C { let a: Int }").diagnostics.contains { $0.contains("must be a 'var'") })
        #expect(Self.expand("@Model final class C { @Transient var a: Int }").diagnostics.contains { $0.contains("default value") })
        #expect(Self.expand("@Composite struct E { static let x = 1 }").diagnostics.contains { $0.contains("no stored property") })
        #expect(Self.expand("@Composite final class K { var a: Int }").diagnostics.contains { $0.contains("applies to a struct") })
    }
}
