/// The version `keygate --version` prints.
enum KeygateVersion {
    static let current = "0.3.0"
}
