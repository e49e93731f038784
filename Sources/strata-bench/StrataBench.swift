import ArgumentParser

/// `strata-bench`: performance scenarios for Strata, each measured next to raw GRDB doing the
/// same SQL in the same process. Build in release mode:
///
/// ```sh
/// swift build -c release --product strata-bench
/// .build/release/strata-bench crud --rows 1000000
/// ```
///
/// A scenario is one `ParsableCommand` in its own file (`CRUDBenchmark.swift`, …) that fills a
/// ``BenchReport``; add it to `subcommands` below.
@main
struct StrataBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-bench",
        abstract: "Benchmark Strata against raw GRDB running the same SQL.",
        discussion: "Every figure is printed with the ratio Strata / raw GRDB (lower is better; 1.00 means no overhead). See docs/Benchmarks.md.",
        subcommands: [CRUDBenchmark.self, DeferralBenchmark.self, SchedulerBenchmark.self, LimitsBenchmark.self, UpgradeBenchmark.self,
                      HistoryBenchmark.self, ReplicationBenchmark.self, ServeBenchmark.self, IsolationBenchmark.self, TransportFloor.self,
                      RolloutBenchmark.self, SchedulerClientCommand.self, RolloutClientCommand.self, BusyCoreCommand.self]
    )
}

/// Options every scenario shares.
struct BenchOptions: ParsableArguments {
    @Flag(name: .long, help: "Print one JSON object instead of text.")
    var json = false

    @Option(name: .long, help: "Directory for the benchmark stores (default: a new temporary directory, removed afterwards).")
    var directory: String?

    @Flag(name: .long, help: "Keep the benchmark stores.")
    var keep = false
}
