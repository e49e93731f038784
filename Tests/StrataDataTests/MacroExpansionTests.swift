import Foundation
import Testing

/// The macros' expansions and diagnostics, through the compiler itself: `swiftc -typecheck`
/// loads the built StrataMacros plug-in on a snippet that declares the macros (no import
/// needed), with `-dump-macro-expansions` for the expanded source. The tests do not link
/// swift-syntax: a test target that depends on a macro target directly is built for the host,
/// with everything it depends on — the whole package a second time.
@Suite struct MacroExpansionTests {
    static let declarations = """
        protocol PersistentModel {}
        protocol Observable {}
        protocol CompositeAttributeValue {}
        @attached(member, names: arbitrary)
        @attached(memberAttribute)
        @attached(extension, conformances: PersistentModel, Observable)
        macro Model() = #externalMacro(module: "StrataMacros", type: "ModelMacro")
        @attached(extension, conformances: CompositeAttributeValue, names: arbitrary)
        macro Composite() = #externalMacro(module: "StrataMacros", type: "CompositeMacro")
        @attached(accessor, names: named(init), named(get), named(set))
        macro _PersistedProperty(_ ordinal: Int) = #externalMacro(module: "StrataMacros", type: "PersistedPropertyMacro")
        @attached(peer) macro Attribute(_ options: Any..., originalName: String? = nil) = #externalMacro(module: "StrataMacros", type: "MarkerMacro")
        @attached(peer) macro Relationship(deleteRule: Any? = nil, inverse: AnyKeyPath? = nil) = #externalMacro(module: "StrataMacros", type: "MarkerMacro")
        @attached(peer) macro Transient() = #externalMacro(module: "StrataMacros", type: "MarkerMacro")
        @freestanding(declaration) macro Index<T>(_ keyPaths: [PartialKeyPath<T>], name: String? = nil) = #externalMacro(module: "StrataMacros", type: "IndexMacro")

        """

    /// The compiler's output (expansions and diagnostics) for `source` after the declarations.
    static func compile(_ source: String) throws -> String {
        let plugin = TestPaths.productsDirectory.appending(path: "StrataMacros-tool")
        try #require(FileManager.default.isExecutableFile(atPath: plugin.path), "the StrataMacros plug-in is built with StrataData")
        let file = try TestPaths.temporaryDirectory().appending(path: "snippet.swift")
        try (declarations + source).write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swiftc", "-typecheck", "-Xfrontend", "-dump-macro-expansions",
                             "-load-plugin-executable", plugin.path + "#StrataMacros", file.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return output
    }

    @Test func aModelGetsStorageMetadataAndAccessors() throws {
        let output = try Self.compile("""
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
        #expect(output.contains("private var _$backing = StrataData.ModelBacking()"))
        #expect(output.contains(#".property("tailNumber", \Aircraft.tailNumber, .unique, originalName: "tail")"#))
        #expect(output.contains(#".property("colorScheme", \Aircraft.colorScheme)"#))
        #expect(output.contains(#".relationship("flights", \Aircraft.flights, deleteRule: .cascade, inverse: \FlightData.aircraft)"#))
        #expect(output.contains(#"indexes: [(name: "byPrimaryColor", keyPaths: ["colorScheme.primary"])]"#))
        #expect(!output.contains("\"scratch\"") && !output.contains("\"label\""))
        #expect(output.contains("@StrataData._PersistedProperty(0)") && output.contains("@StrataData._PersistedProperty(2)"))
        #expect(!output.contains("@StrataData._PersistedProperty(3)"))   // the transient and computed ones get none
        #expect(output.contains("extension Aircraft: PersistentModel, Observable"))
        #expect(!output.contains("(from macro"), "no diagnostic of ours: \(output)")
    }

    @Test func aPersistedPropertyGoesThroughTheBackingAndTheRegistrar() throws {
        let output = try Self.compile("""
            final class Aircraft {
                @_PersistedProperty(2) var flights: [Int]
            }
            """)
        #expect(output.contains("@storageRestrictions(initializes: _$flights, accesses: _$backing)"))
        #expect(output.contains("_$backing.initialize(2, initialValue)"))
        #expect(output.contains("return _$backing.getValue(2)") && output.contains("_$backing.setValue(2, newValue)"))
        #expect(output.contains(#"_$observationRegistrar.access(self, keyPath: \.flights)"#))
        #expect(output.contains(#"_$observationRegistrar.withMutation(of: self, keyPath: \.flights)"#))
    }

    @Test func aCompositeGetsItsElementsReaderAndWriter() throws {
        let output = try Self.compile("""
            @Composite
            struct ColorScheme {
                var primary: String?
                var trim: Trim?
                static let none = 0
            }
            """)
        #expect(output.contains(#".element("primary", \ColorScheme.primary)"#) && output.contains(#".element("trim", \ColorScheme.trim)"#))
        #expect(output.contains("self.trim = reader.next()") && output.contains("writer.write(self.primary)"))
        #expect(!output.contains("\"none\""))
    }

    @Test func declarationsThatCannotBeModelsAreDiagnosed() throws {
        let output = try Self.compile("""
            @Model class Open { var a: Int = 0 }
            @Model struct S { var a: Int }
            @Model final class Untyped { var a = 1 }
            @Model final class Constant { let a: Int = 1 }
            @Model final class NoDefault { @Transient var a: Int }
            @Composite struct Empty { static let x = 1 }
            @Composite final class NotAStruct { var a: Int = 0 }
            @Model final class BadIndex { var a: Int = 0
                #Index<BadIndex>(nil) }
            """)
        for message in ["@Model applies to a final class: add 'final'", "use @Composite for a struct", "give the persisted property 'a' of 'Untyped' an explicit type",
                        "must be a 'var' ('a')", "the @Transient property 'a' of 'NoDefault' needs a default value",
                        "the composite 'Empty' has no stored property", "@Composite applies to a struct", "#Index takes an array literal of key paths"] {
            #expect(output.contains(message), "\(message) missing in \(output)")
        }
    }
}
