import ArgumentParser
import Foundation
import Strata

/// `stratactl model …`: check model files and print their version checksums, offline.
struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Validate model files and print their version checksums.",
        discussion: """
            PATH is a model file (.json, .yaml or .yml: one version), a model directory \
            (version files plus a manifest, versions.yaml, that lists them in migration order \
            and names the current version), a Core Data .xcdatamodeld bundle (every version) \
            or a Core Data .xcdatamodel (one version).

            The file format is described in docs/ModelFiles.md.
            """,
        subcommands: [Checksum.self, Validate.self, Convert.self]
    )
}

extension ModelCommand {
    /// `stratactl model checksum PATH`
    struct Checksum: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the version checksum of every model version at PATH.",
            discussion: """
                The checksum is the base64 SHA-256 that a store records in its metadata: it \
                covers everything that affects storage (entities, properties, types, \
                optionality, relationships, composites, indexes, constraints, inheritance) and \
                nothing else (not version names, renaming identifiers, user info, defaults, \
                delete rules or declaration order).

                Text output: one line per version, "NAME<TAB>CHECKSUM", in migration order; \
                for a directory, the current version's line ends with "<TAB>current". With --json: an array of \
                {"version", "checksum", "entityHashes"} objects.

                A version of a Core Data bundle that cannot be read is reported for that version \
                ("NAME<TAB>-<TAB>unreadable" and the problem on standard error; with --json an \
                object with "version" and "error") without hiding the others; the command then \
                exits 1.

                Examples:
                  stratactl model checksum config/models/Aircraft
                  stratactl model checksum --json Model.xcdatamodeld
                """
        )

        @OptionGroup var output: OutputOptions

        @Argument(help: "A model file, a model directory, or a Core Data .xcdatamodel(d).", completion: .file())
        var path: String

        func run() throws {
            let url = URL(filePath: path)
            if url.pathExtension.lowercased() == "xcdatamodeld" {
                try bundleChecksums(url)
                return
            }
            let versions: [ObjectModel]
            let current: String?
            do {
                if ModelPath.isDirectoryOfVersions(url) {
                    let directory = try ModelDirectory(url: url)
                    versions = directory.versions
                    current = directory.current.version
                } else {
                    versions = [try ModelFile.load(contentsOf: url)]
                    current = nil
                }
            } catch {
                throw ModelPath.fail(error)
            }
            if output.json {
                let rows = versions.map { VersionChecksum(version: $0.version, checksum: $0.checksum, entityHashes: $0.entityHashes) }
                try ModelPath.printJSON(rows)
            } else {
                for model in versions {
                    let mark = model.version == current && versions.count > 1 ? "\tcurrent" : ""
                    print("\(model.version)\t\(model.checksum)\(mark)")
                }
            }
        }

        /// Every version of a Core Data bundle, each read on its own.
        private func bundleChecksums(_ url: URL) throws {
            let bundle: CoreDataModelBundle
            do {
                bundle = try CoreDataModelBundle(url: url)
            } catch {
                throw ModelPath.fail(error)
            }
            if output.json {
                let rows = bundle.versions.map { version in
                    version.model.map { VersionChecksum(version: $0.version, checksum: $0.checksum, entityHashes: $0.entityHashes, current: version.name == bundle.currentName ? true : nil) }
                        ?? VersionChecksum(version: version.name, checksum: nil, entityHashes: nil, error: version.error.map(ValidationReport.Problem.init))
                }
                try ModelPath.printJSON(rows)
            } else {
                for version in bundle.versions {
                    let mark = version.name == bundle.currentName && bundle.versions.count > 1 ? "\tcurrent" : ""
                    if let model = version.model {
                        print("\(model.version)\t\(model.checksum)\(mark)")
                    } else {
                        print("\(version.name)\t-\tunreadable\(mark)")
                    }
                }
            }
            for version in bundle.versions {
                if let error = version.error { FileHandle.standardError.write(Data("stratactl: \(error)\n".utf8)) }
            }
            if !bundle.unreadableVersions.isEmpty { throw ExitCode.failure }
        }
    }

    /// `stratactl model validate PATH`
    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the model versions at PATH and report every problem.",
            discussion: """
                Reports every problem, not just the first: unknown or missing keys, wrong \
                value types, unknown attribute types, defaults of the wrong type, relationships \
                inside composites, duplicate or invalid names, unknown parents and inheritance \
                cycles, unknown destinations and mismatched inverses, unknown index or \
                constraint keypaths, column collisions; for a directory, its manifest, \
                duplicate versions and unknown current or next versions.

                Prints "valid" and exits 0, or prints one problem per line (file, version, \
                entity, property, what to fix) and exits 1. With --json: \
                {"valid": BOOL, "errors": [{"code", "file", "version", "entity", "property", \
                "reason", "message"}]}.
                """
        )

        @OptionGroup var output: OutputOptions

        @Argument(help: "A model file, a model directory, or a Core Data .xcdatamodel(d).", completion: .file())
        var path: String

        func run() throws {
            let url = URL(filePath: path)
            guard FileManager.default.fileExists(atPath: url.path) else {
                throw ModelPath.fail(ModelError(.unreadableFile, "no such file or directory", file: url.path))
            }
            let errors = ModelFile.validationErrors(contentsOf: url)
            if output.json {
                try ModelPath.printJSON(ValidationReport(valid: errors.isEmpty, errors: errors.map(ValidationReport.Problem.init)))
            } else if errors.isEmpty {
                print("valid")
            } else {
                for error in errors { print("\(error.code.rawValue): \(error)") }
                print("\(errors.count) problem\(errors.count == 1 ? "" : "s") found")
            }
            if !errors.isEmpty { throw ExitCode.failure }
        }
    }

    /// `stratactl model convert PATH --to yaml`
    struct Convert: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a model version as a JSON or YAML model file.",
            discussion: """
                Reads one version (a model file, a Core Data .xcdatamodel, or the current \
                version of an .xcdatamodeld or model directory, or the one named by \
                --version) and writes it in the Strata model file format to standard output. \
                Use it to move a Core Data model to Strata:

                  stratactl model convert Model.xcdatamodeld --version "Model 2" --to yaml > "Model 2.yaml"
                """
        )

        @Argument(help: "A model file, a model directory, or a Core Data .xcdatamodel(d).", completion: .file())
        var path: String

        @Option(name: .long, help: "The output format: json or yaml.")
        var to: String = "yaml"

        @Option(name: .long, help: "The version to convert (default: the current one).")
        var version: String?

        func validate() throws {
            guard ModelFileFormat(rawValue: to) != nil else {
                throw ValidationError("--to must be json or yaml, not '\(to)'")
            }
        }

        func run() throws {
            let url = URL(filePath: path)
            do {
                let model: ObjectModel
                if ModelPath.isDirectoryOfVersions(url) {
                    let directory = try ModelDirectory(url: url)
                    if let version {
                        guard let found = directory.version(named: version) else {
                            throw ModelError(.unknownVersion, "no version '\(version)'; the versions are \(directory.versions.map(\.version).joined(separator: ", "))", file: url.path)
                        }
                        model = found
                    } else {
                        model = directory.current
                    }
                } else {
                    model = try ModelFile.load(contentsOf: url)
                    if let version, version != model.version {
                        throw ModelError(.unknownVersion, "the file holds version '\(model.version)', not '\(version)'", file: url.path)
                    }
                }
                let data = try ModelFile.encode(model, format: ModelFileFormat(rawValue: to) ?? .yaml)
                FileHandle.standardOutput.write(data)
            } catch let error as ModelError {
                throw ModelPath.fail(error)
            }
        }
    }
}

// MARK: - Helpers

/// One row of `stratactl model checksum --json`.
struct VersionChecksum: Encodable {
    var version: String
    var checksum: String?
    var entityHashes: [String: String]?
    /// For a bundle: whether this is the current version.
    var current: Bool?
    /// Why a bundle version cannot be read.
    var error: ValidationReport.Problem?
}

/// The output of `stratactl model validate --json`.
struct ValidationReport: Encodable {
    struct Problem: Encodable {
        var code: String
        var file: String?
        var version: String?
        var entity: String?
        var property: String?
        var reason: String
        var message: String

        init(_ error: ModelError) {
            code = error.code.rawValue
            file = error.file
            version = error.version
            entity = error.entity
            property = error.property
            reason = error.reason
            message = error.description
        }
    }

    var valid: Bool
    var errors: [Problem]
}

enum ModelPath {
    /// Whether `url` holds several versions: a Core Data bundle or a directory that is not a
    /// single `.xcdatamodel`.
    static func isDirectoryOfVersions(_ url: URL) -> Bool {
        let ext = url.pathExtension.lowercased()
        if ext == "xcdatamodeld" { return true }
        var isDirectory: ObjCBool = false
        return ext != "xcdatamodel" && FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
            && isDirectory.boolValue
    }

    /// Writes the error to standard error and returns the exit code to throw.
    static func fail(_ error: ModelError) -> ExitCode {
        FileHandle.standardError.write(Data("stratactl: \(error)\n".utf8))
        return ExitCode.failure
    }

    static func printJSON<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        FileHandle.standardOutput.write(try encoder.encode(value))
        FileHandle.standardOutput.write(Data("\n".utf8))
    }
}
