import Testing
@testable import StrataDaemon

@Test func durationParsing() {
    #expect(DurationText.parse("250ms") == .milliseconds(250))
    #expect(DurationText.parse("5m") == .seconds(300))
    #expect(DurationText.parse("nope") == nil)
}
