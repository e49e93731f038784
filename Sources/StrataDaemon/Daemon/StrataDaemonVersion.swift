/// The daemon's version, reported by `GetInfo`, `Status` and `stratad --version`.
public enum StrataDaemonVersion {
    /// The daemon's version.
    public static let string = "0.1.0"
}
