import Foundation

/// The roll-out settings (`rollout:` in the configuration, `stratactl get/set rollout.KEY`):
/// one today, `grace`.
///
/// | key | default | range | meaning |
/// |---|---|---|---|
/// | `rollout.grace` | `10m` | `0s – 168h` | how long after its last call a model version's clients count as active; the cleanup that would destroy what an active older version uses waits (0s: never) |
public enum RolloutSettings {
    /// `rollout.grace` when not configured: a client that called within the last ten minutes
    /// is still running (rolling deploys, canaries, clients that call now and then).
    public static let defaultGrace: Duration = .seconds(600)
    /// The accepted graces: none (cleanup never waits) to a week.
    public static let graceRange: ClosedRange<Duration> = .zero ... .seconds(7 * 86_400)
    /// The settings' keys, as `get`/`set` name them.
    public static let keys = ["rollout.grace"]
    /// The key in the configuration's `rollout:` section.
    static let configurationKeys: Set<String> = ["grace"]
    /// What `rollout.grace` means (shown by `stratactl get` and in the docs).
    public static let graceMeaning = "how long after its last call a model version's clients count as active: the deferred cleanup that would drop what an active older version still uses waits (0s: never)"

    /// The grace `text` denotes.
    ///
    /// - Throws: ``SchedulerSettingError`` naming the key, the value and the range.
    public static func parseGrace(_ text: String) throws(SchedulerSettingError) -> Duration {
        guard let value = DurationText.parse(text), graceRange.contains(value) else {
            throw SchedulerSettingError(key: "rollout.grace", value: text, reason: "'\(text)' is not a duration between \(DurationText.format(graceRange.lowerBound)) and \(DurationText.format(graceRange.upperBound)) (e.g. 30s, 10m, 2h)")
        }
        return value
    }

    /// The range as people read it.
    public static var graceRangeText: String { "\(DurationText.format(graceRange.lowerBound)) – \(DurationText.format(graceRange.upperBound))" }
}
