import Foundation

extension ModelFile {
    /// Every problem with the model or models at `url`, without stopping at the first: a model
    /// file (`.json`, `.yaml`, `.yml`), a Core Data `.xcdatamodel` or `.xcdatamodeld`, or a
    /// model directory with a manifest. Empty when everything is valid.
    ///
    /// Each version is checked on its own (a syntax or format error stops that file only;
    /// ``ObjectModel/validationErrors()`` lists all model problems), then, when every version is
    /// valid, the directory as a whole (duplicate versions, unknown `current` or `nextVersion`).
    public static func validationErrors(contentsOf url: URL) -> [ModelError] {
        let ext = url.pathExtension.lowercased()
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
        if ext == "xcdatamodeld" {
            do {
                let bundle = try CoreDataModelBundle(url: url)
                let errors = bundle.versions.map(\.url).flatMap(fileErrors)
                if !errors.isEmpty { return errors }
                _ = try ModelDirectory(coreDataBundle: url)
                return []
            } catch {
                return [error]
            }
        }
        if exists && isDirectory.boolValue && ext != "xcdatamodel" {
            do {
                guard let manifestURL = ModelDirectory.manifestNames.lazy.map({ url.appending(path: $0) })
                    .first(where: { FileManager.default.fileExists(atPath: $0.path) })
                else {
                    _ = try ModelDirectory(url: url)  // throws the "no manifest" error
                    return []
                }
                let manifest = try ModelDirectoryManifest.load(manifestURL)
                let errors = manifest.entries.flatMap { entry in
                    let file = url.appending(path: entry.file)
                    guard FileManager.default.fileExists(atPath: file.path) else {
                        return [ModelError(.unreadableFile, "the manifest lists '\(entry.file)', which does not exist in \(url.path)", file: manifestURL.path, version: entry.version)]
                    }
                    return fileErrors(file)
                }
                if !errors.isEmpty { return errors }
                _ = try ModelDirectory(url: url)
                return []
            } catch {
                return [error]
            }
        }
        return fileErrors(url)
    }

    /// The problems of one version file: its format error, or all its model errors.
    private static func fileErrors(_ url: URL) -> [ModelError] {
        do {
            let model: ObjectModel
            let file: String
            switch url.pathExtension.lowercased() {
            case "xcdatamodel":
                let contents = url.appending(path: "contents")
                file = contents.path
                model = try CoreDataModelImporter.importContents(readFile(contents), version: url.deletingPathExtension().lastPathComponent, file: file)
            default:
                guard let format = ModelFileFormat(pathExtension: url.pathExtension) else {
                    _ = try load(contentsOf: url)  // throws the "unknown extension" error
                    return []
                }
                file = url.path
                let (decoded, problems) = try decodeCollectingProblems(readFile(url), format: format, file: file)
                return problems + decoded.validationErrors().map { $0.inFile(file, version: decoded.version) }
            }
            return model.validationErrors().map { $0.inFile(file, version: model.version) }
        } catch {
            return [error]
        }
    }
}
