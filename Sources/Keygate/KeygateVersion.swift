/// The version of this Keygate package: what `keygate --version`, `keygated --version` and the
/// daemon's hello reply name. One number for every program and library the package builds.
public enum KeygateVersion {
    /// The release, as `MAJOR.MINOR.PATCH`.
    public static let current = "0.4.0"
}
