import FoundationEssentials
import Glibc
import Keygate
import KeygateLinux
import KeygatePolicy

/// Where the CLI finds organisation policies, and who the calling program is.
extension GlobalOptions {
    /// The system directory read when `--policies` is not given (when it exists).
    static let systemPolicies = "/etc/keygate/policies"

    /// `--policies DIR`, else `/etc/keygate/policies` (when it exists) plus the user's
    /// `$XDG_CONFIG_HOME/keygate/policies` (else `~/.config/keygate/policies`): in embedded
    /// mode the user's own rules apply on top of the system's.
    func policyPaths() -> [String] {
        if let policies { return [policies] }
        var paths: [String] = []
        if FileManager.default.fileExists(atPath: Self.systemPolicies) { paths.append(Self.systemPolicies) }
        let config =
            ProcessEnvironment.value("XDG_CONFIG_HOME").flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? StandardPaths.joined(StandardPaths.homeDirectory(), ".config")
        paths.append(StandardPaths.joined(config, "keygate/policies"))
        return paths
    }

    /// Loads every policy of ``policyPaths()``; any error fails the whole load (fail closed).
    func loadPolicies() throws(KeygateError) -> PolicySet {
        try PolicyDirectory.load(policyPaths())
    }
}
