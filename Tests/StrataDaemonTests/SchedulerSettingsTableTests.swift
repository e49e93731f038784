import Foundation
import StrataDaemon
import Testing

/// The scheduler's settings are described once (``SchedulerSettings/table``); the configuration,
/// `get`/`set` and the docs derive from it.
@Suite("Scheduler settings table")
struct SchedulerSettingsTableTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("docs/Scheduler.md shows the table rendered from the source")
    func docsMatchTable() throws {
        let docs = try String(contentsOf: Self.repository.appendingPathComponent("docs/Scheduler.md"), encoding: .utf8)
        #expect(docs.contains(SchedulerSettings.markdownTable + "\n"), "replace the settings table of docs/Scheduler.md with:\n\(SchedulerSettings.markdownTable)")
    }

    @Test("every row's default is what a default SchedulerSettings holds, and parses back to it")
    func defaultsRoundTrip() throws {
        let defaults = SchedulerSettings()
        for setting in SchedulerSettings.table {
            var settings = SchedulerSettings()
            try settings.set(setting.key, to: setting.defaultValue)
            #expect(settings == defaults, "\(setting.key)=\(setting.defaultValue)")
            #expect(settings.value(of: setting.key) == setting.defaultValue)
        }
        #expect(SchedulerSettings.keys == SchedulerSettings.table.map(\.key))
        #expect(Set(SchedulerSettings.keys).count == SchedulerSettings.keys.count, "keys are unique")
    }

    @Test("a duration or number out of its row's range is refused naming the range")
    func rangesComeFromTheTable() throws {
        var settings = SchedulerSettings()
        let error = try #require(throws: SchedulerSettingError.self) { try settings.set("batch_budget", to: "11s") }
        #expect(error.reason == "'11s' is not a duration between 1ms and 10s (e.g. 500ms, 30s, 5m)")
        #expect(SchedulerSettings.setting("batch_budget")?.range == "1ms – 10s")
        // A forced run's cost delay: its own range; a refused value leaves the setting as it was.
        try settings.set("forced_pause_between_batches", to: "5ms")
        let forced = try #require(throws: SchedulerSettingError.self) { try settings.set("forced_pause_between_batches", to: "2m") }
        #expect(forced.reason == "'2m' is not a duration between 0s and 1m (e.g. 500ms, 30s, 5m)")
        #expect(settings.forcedPauseBetweenBatches == .milliseconds(5))
        let unknown = try #require(throws: SchedulerSettingError.self) { try settings.set("batch_budgt", to: "1s") }
        #expect(unknown.unknownKey)
        #expect(unknown.reason.hasPrefix("unknown setting 'batch_budgt'; known: enabled, idle_after, batch_budget"))
    }
}
