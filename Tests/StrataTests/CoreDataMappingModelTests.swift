import Foundation
import GRDB
import Testing
@testable import Strata

/// Core Data mapping models (`.xcmappingmodel`) turned into generated custom stages: keypath
/// and `FUNCTION` expressions, relationships through another entity mapping with both sides of
/// a one-to-one kept in step, and refusals (custom policy, untranslatable expression, a
/// mapping for other versions) before anything is written.
@Suite("Core Data mapping models as custom stages")
struct CoreDataMappingModelTests {
    static func shop() throws -> (CoreDataFixture, URL) {
        let fixture = CoreDataFixture()
        let bundle = try CoreDataMappingFixture.writeBundle(in: fixture)
        try CoreDataMappingFixture.writeStore(at: fixture.store)
        try FileManager.default.createDirectory(at: fixture.out.deletingLastPathComponent(), withIntermediateDirectories: true)
        return (fixture, bundle)
    }

    static func customers(_ url: URL) throws -> [String] {
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        return try queue.read { db in
            try Row.fetchAll(db, sql: #"SELECT c."_pk" AS pk, c."displayName" AS d, c."shout" AS s, c."vip" AS v, p."name" AS pet, p."keeper_id" AS k FROM "Customer" c LEFT JOIN "Pet" p ON p."_pk" = c."companion_id" ORDER BY c."_pk""#)
                .map { "\($0["pk"] as Int64) \($0["d"] as String? ?? "-") \($0["s"] as String? ?? "-") \($0["v"] as Int64? ?? -1) \($0["pet"] as String? ?? "-") \($0["k"] as Int64? ?? 0)" }
        }
    }

    @Test("the mapping model is read from its xcmapping.xml")
    func parse() throws {
        let (fixture, _) = try Self.shop()
        let url = try CoreDataMappingFixture.writeMapping(in: fixture.directory.url)
        let mapping = try CoreDataMappingModel(url: url)
        #expect(mapping.sourceVersion == "Shop")
        #expect(mapping.destinationVersion == "Shop 2")
        #expect(mapping.entityMappings.map(\.name) == ["CustomerToCustomer", "PetToPet"])
        #expect(mapping.entityMappings[0].attributeMappings.map(\.name) == ["displayName", "shout", "vip"])
        #expect(mapping.entityMappings[0].attributeMappings[1].expression == #"FUNCTION(FUNCTION($source.last, "uppercaseString"), "stringByAppendingString:", "!")"#)
        #expect(mapping.entityMappings[0].relationshipMappings.map(\.name) == ["companion"])
        #expect(mapping.entityMappings[1].attributeMappings == [.init(name: "name", expression: nil, archivedOnly: false)])
    }

    @Test("the generated stage: values computed from the source, both sides of the one-to-one set")
    func generatedStatements() throws {
        let (fixture, bundle) = try Self.shop()
        let url = try CoreDataMappingFixture.writeMapping(in: fixture.directory.url)
        let stages = try CoreDataMappingStage.load([url], directory: ModelDirectory(url: bundle))
        #expect(stages.map(\.label) == ["mapping model ShopToShop2.xcmappingmodel"])
        #expect(stages[0].statements == [
            #"UPDATE "Customer" SET "displayName" = "first", "shout" = (upper("last") || '!'), "companion_id" = "buddy_id";"#,
            #"UPDATE "Pet" SET "keeper_id" = (SELECT o."_pk" FROM "Customer" o WHERE o."companion_id" = "Pet"."_pk" ORDER BY o."_pk" LIMIT 1);"#,
        ])
    }

    @Test("import-coredata --to runs the mapping model found beside the bundle")
    func importWithMapping() throws {
        let (fixture, bundle) = try Self.shop()
        try CoreDataMappingFixture.writeMapping(in: bundle.deletingLastPathComponent())
        let report = try CoreDataStoreImporter(bundle: bundle, options: .init(toVersion: "Shop 2")).importStore(at: fixture.store, to: fixture.out)
        #expect(report.migration?.hops.map(\.stageLabel) == ["mapping model ShopToShop2.xcmappingmodel"])
        #expect(try Self.customers(fixture.out) == ["1 Ann LEE! 1 Rex 1", "2 Bob RAY! 0 Tom 2", "3 Cy - 0 - 0"])
        #expect(try DatabaseQueue(path: fixture.out.path).strings(#"SELECT "name" || ':' || coalesce("keeper_id", 0) FROM "Pet" ORDER BY "_pk""#) == ["Tom:2", "Rex:1", "Fido:0"])
    }

    @Test("a custom NSEntityMigrationPolicy is refused, naming the mapping, entity and class; nothing is written")
    func customPolicy() throws {
        let (fixture, bundle) = try Self.shop()
        let url = try CoreDataMappingFixture.writeMapping([("CustomerToCustomer", "Customer", "Customer", "ShopCustomerPolicy", CoreDataMappingFixture.customerProperties)],
                                                          in: fixture.directory.url)
        var options = CoreDataStoreImporter.Options(toVersion: "Shop 2")
        options.mappingModels = [url]
        let error = try CoreDataImportBadInputTests.refused(fixture, .migrationFailed, options: options, bundle: bundle)
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("mapping model \(url.path): entity mapping 'CustomerToCustomer', entity 'Customer': it names the custom migration policy class ShopCustomerPolicy"), "\(text)")
        #expect(text.contains("write this step as a custom stage instead (a stage file passed with --stages: `stages: [{label: …, from: Shop, to: Shop 2"), "\(text)")
    }

    @Test("an expression without an SQL equivalent is refused, naming the property and the expression", arguments: [
        (#"FUNCTION($source.first, "capitalizedString")"#, #"FUNCTION(…, "capitalizedString") has no SQL equivalent here"#),
        (#"FUNCTION($entityPolicy, "fullNameFor:", $source)"#, "$entityPolicy is a migration-manager or policy variable"),
        ("$source.buddy.name", "the key path $source.buddy.name goes through a relationship"),
        ("$source.nickname", "the source entity 'Customer' of 'Shop' has no attribute 'nickname'"),
        (#"FUNCTION($source.first, "uppercaseString""#, "the expression cannot be read: expected ')'"),
    ])
    func untranslatable(_ expression: String, _ why: String) throws {
        let (fixture, bundle) = try Self.shop()
        var properties = CoreDataMappingFixture.customerProperties
        properties[0].expression = expression
        let url = try CoreDataMappingFixture.writeMapping([("CustomerToCustomer", "Customer", "Customer", nil, properties)], in: fixture.directory.url)
        let error = #expect(throws: CoreDataMappingError.self) { try CoreDataMappingStage.load([url], directory: ModelDirectory(url: bundle)) }
        #expect(error?.code == .untranslatable)
        #expect(error?.description.contains("entity mapping 'CustomerToCustomer', property 'Customer.displayName', expression '\(expression)'") == true, "\(String(describing: error))")
        #expect(error?.description.contains(why) == true, "\(String(describing: error))")
    }

    @Test("a mapping model for versions the bundle does not have is refused when given, skipped when found beside it")
    func otherVersions() throws {
        let (fixture, bundle) = try Self.shop()
        let url = try CoreDataMappingFixture.writeMapping(in: fixture.directory.url, source: "Other.xcdatamodeld/Other.xcdatamodel")
        let error = #expect(throws: CoreDataMappingError.self) { try CoreDataMappingStage.load([url], directory: ModelDirectory(url: bundle)) }
        #expect(error?.code == .unknownVersion)
        #expect(error?.description.contains("it maps 'Other' -> 'Shop 2' (its recorded model paths), which are not both versions of Shop.xcdatamodeld (Shop, Shop 2)") == true, "\(String(describing: error))")
        #expect(try CoreDataMappingStage.load([url], directory: ModelDirectory(url: bundle), implicit: true).isEmpty)
    }

    @Test("a mapping model both given and found beside the bundle makes one stage")
    func givenAndBeside() throws {
        let (fixture, bundle) = try Self.shop()
        let url = try CoreDataMappingFixture.writeMapping(in: bundle.deletingLastPathComponent())
        let roundabout = URL(fileURLWithPath: bundle.deletingLastPathComponent().path + "/../models/" + url.lastPathComponent)
        #expect(CoreDataMappingModel.mappingModels(besideBundleAt: bundle).map(\.lastPathComponent) == ["ShopToShop2.xcmappingmodel"])
        #expect(CoreDataMappingModel.mappingModels(besideBundleAt: bundle, except: [roundabout]) == [])
        var options = CoreDataStoreImporter.Options(toVersion: "Shop 2")
        options.mappingModels = [roundabout]
        let importer = try CoreDataStoreImporter(bundle: bundle, options: options)
        #expect(try importer.mappingStages(directory: ModelDirectory(url: bundle)).count == 1)
        _ = fixture
    }

    @Test("a file that is not a mapping model names the file, line and column")
    func notAMappingModel() throws {
        let (fixture, _) = try Self.shop()
        let url = fixture.directory.file("Broken.xcmappingmodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Data("<database>\n  <object type=\"XDDEVMAPPINGMODEL\" id=\"z1\">\n</database>".utf8).write(to: url.appending(path: "xcmapping.xml"))
        let error = #expect(throws: CoreDataMappingError.self) { try CoreDataMappingModel(url: url) }
        #expect(error?.code == .unreadable)
        #expect(error?.description.contains("mapping model \(url.path)/xcmapping.xml: line 3, column") == true, "\(String(describing: error))")
        let missing = #expect(throws: CoreDataMappingError.self) { try CoreDataMappingModel(url: fixture.directory.file("None.xcmappingmodel")) }
        #expect(missing?.description.contains("does not exist; pass an .xcmappingmodel") == true)
    }

    @Test("stratactl: import-coredata --mapping runs it; a refused mapping exits 3 and writes nothing; migrate --dry-run shows the generated stage",
          .enabled(if: StratactlProcess.executable != nil))
    func command() throws {
        let (fixture, bundle) = try Self.shop()
        let url = try CoreDataMappingFixture.writeMapping(in: fixture.directory.url)
        let base = ["import-coredata", "--model", bundle.path, "--store", fixture.store.path, "--to", "Shop 2", "--quiet"]
        let ok = try StratactlProcess.run(base + ["--out", fixture.out.path, "--mapping", url.path])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains("Shop -> Shop 2  [mapping model ShopToShop2.xcmappingmodel]"), "\(ok.stdout)")
        #expect(try Self.customers(fixture.out).first == "1 Ann LEE! 1 Rex 1")

        let policy = try CoreDataMappingFixture.writeMapping([("PetToPet", "Pet", "Pet", "PetPolicy", [])], named: "Policy", in: fixture.directory.url)
        let refused = try StratactlProcess.run(base + ["--out", fixture.out.path + ".2", "--mapping", policy.path])
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("entity mapping 'PetToPet', entity 'Pet': it names the custom migration policy class PetPolicy"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: fixture.out.path + ".2"))

        // A Strata store at Shop, migrated offline with the mapping model.
        let strata = fixture.directory.file("strata/shop.sqlite")
        try CoreDataStoreImporter(bundle: bundle).importStore(at: fixture.store, to: strata)
        let dry = try StratactlProcess.run(["migrate", strata.path, "--model", bundle.path, "--to", "Shop 2", "--mapping", url.path, "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("[custom: mapping model ShopToShop2.xcmappingmodel]"), "\(dry.stdout)")
        #expect(dry.stdout.contains("  STAGE    didMigrate generated from ShopToShop2.xcmappingmodel:\n            UPDATE \"Customer\" SET \"displayName\" = \"first\""), "\(dry.stdout)")
        #expect(dry.stdout.components(separatedBy: "STAGE").count == 2, "the stage is shown once: \(dry.stdout)")
        let plan = try StratactlProcess.run(["plan", "--from", "Shop", "--to", "Shop 2", "--model", bundle.path, "--mapping", url.path])
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("  STAGE    didMigrate generated from ShopToShop2.xcmappingmodel:\n            UPDATE \"Customer\" SET \"displayName\" = \"first\""), "\(plan.stdout)")
        let badPlan = try StratactlProcess.run(["plan", "--from", "Shop", "--to", "Shop 2", "--model", bundle.path, "--mapping", policy.path])
        #expect(badPlan.status == 3)
        #expect(badPlan.stderr.contains("custom migration policy class PetPolicy"), "\(badPlan.stderr)")
        let run = try StratactlProcess.run(["migrate", strata.path, "--model", bundle.path, "--to", "Shop 2", "--mapping", url.path, "--quiet"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Self.customers(strata) == ["1 Ann LEE! 1 Rex 1", "2 Bob RAY! 0 Tom 2", "3 Cy - 0 - 0"])
    }
}
