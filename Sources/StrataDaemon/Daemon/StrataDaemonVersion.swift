/// The daemon's version, reported by `GetInfo`, `Status` and `stratad --version`.
public enum StrataDaemonVersion {
    public static let string = "0.1.0"
}
