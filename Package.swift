// swift-tools-version:6.1
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        // The typed layer: @Model classes, #Predicate, FetchDescriptor, versioned schemas.
        .library(name: "StrataData", targets: ["StrataData"]),
        .executable(name: "stratactl", targets: ["stratactl"]),
        .executable(name: "strata-bench", targets: ["strata-bench"]),
        .executable(name: "stratad", targets: ["stratad"]),
        .executable(name: "strata-fuzz", targets: ["strata-fuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // `swift package generate-documentation --target Strata` (make docs): the DocC catalog.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // @Model, @Composite, #Index (StrataMacros): only StrataData and its tests build it.
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
    ],
    targets: [
        // Units every other module shares (Duration arithmetic): no dependencies at all.
        .target(name: "StrataUnits"),
        // RE2 (Debian's libre2-dev) behind a small C interface: MATCHES matches in time linear in
        // the text, whatever the pattern (docs/Predicates.md).
        .target(name: "CStrataRE2", linkerSettings: [.linkedLibrary("re2")]),
        .target(
            name: "Strata",
            dependencies: [
                "StrataUnits",
                "CStrataRE2",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The macros of the typed layer (swift-syntax; a compiler plug-in, never linked into
        // a product). Kept to SwiftSyntaxMacros + SwiftCompilerPlugin.
        .macro(
            name: "StrataMacros",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        // The typed layer over Strata's object layer (docs/TypedModels.md): one persistence
        // path, the same stores. Strata itself does not depend on it (nor on swift-syntax).
        .target(
            name: "StrataData",
            dependencies: [
                "Strata",
                "StrataMacros",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The WWDC 2023 Aircraft story in the typed API (Examples/TypedAircraft; docs/TypedModels.md).
        .executableTarget(name: "typed-aircraft-example", dependencies: ["StrataData"], path: "Examples/TypedAircraft"),
        // Tests only: a fault-injecting SQLite VFS (I/O errors, power loss); docs/Security.md.
        .target(name: "CStrataFaultVFS", linkerSettings: [.linkedLibrary("sqlite3")]),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // Varlink: codec, NIO server and client, and the typed io.strata.Admin / io.strata.Store
        // (no Strata, no systemd, no service-lifecycle: stratactl links it).
        // The Swift side of varlink/*.varlink is generated at build time (VarlinkCodegenPlugin).
        .target(
            name: "StrataVarlink",
            dependencies: [
                "StrataUnits",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ],
            plugins: ["VarlinkCodegenPlugin"]
        ),
        // The generator: varlink/*.varlink and their .swift.json notes to Swift (Foundation only).
        .target(name: "VarlinkCodegen"),
        .executableTarget(name: "strata-varlink-codegen", dependencies: ["VarlinkCodegen"]),
        .plugin(name: "VarlinkCodegenPlugin", capability: .buildTool(), dependencies: ["strata-varlink-codegen"]),
        .target(
            name: "StrataDaemon",
            dependencies: [
                "Strata",
                "StrataUnits",
                "StrataVarlink",
                "CSystemd",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .executableTarget(
            name: "stratad",
            dependencies: [
                "StrataDaemon",
                "StrataVarlink",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "stratactl",
            dependencies: [
                "Strata",
                "StrataUnits",
                "StrataVarlink",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "strata-bench",
            dependencies: [
                "Strata",
                "StrataUnits",
                "StrataData",
                "StrataDaemon",
                "StrataVarlink",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // libFuzzer targets (docs/Fuzzing.md): built for fuzzing by scripts/fuzz.sh, which
        // adds the sanitizer and coverage flags and -DSTRATA_FUZZING; built normally, the
        // executable replays inputs (strata-fuzz TARGET FILE…).
        .executableTarget(
            name: "strata-fuzz",
            dependencies: [
                "Strata",
                "StrataDaemon",
                "StrataVarlink",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "StrataTests",
            dependencies: [
                "Strata",
                "CStrataFaultVFS",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "StrataDataTests",
            dependencies: [
                "StrataData",
                "Strata",
                "stratactl",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "StrataVarlinkTests",
            dependencies: [
                "StrataVarlink",
                "VarlinkCodegen",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "StrataDaemonTests",
            dependencies: [
                "StrataDaemon",
                "StrataVarlink",
                .product(name: "Prometheus", package: "swift-prometheus"),
                "Strata",
                "stratad",
                "stratactl",
                "strata-fuzz",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "Strata",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            // Scripts the tests run from the checkout (a Python Varlink client, a script run
            // under a private systemd): not sources, not bundle resources.
            exclude: ["python", "systemd"]
        ),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
