import FoundationEssentials
import Glibc
import Keygate
import KeygatePolicy

/// Where the CLI finds organisation policies.
extension StoreOptions {
    /// The system directory read when `--policies` is not given (when it exists).
    static let systemPolicies = "/etc/keygate/policies"

    /// `--policies DIR`, else `/etc/keygate/policies` (when it exists) plus the user's
    /// `$XDG_CONFIG_HOME/keygate/policies` (else `~/.config/keygate/policies`): in embedded
    /// mode the user's own rules apply on top of the system's.
    func policyPaths(_ variables: EnvironmentVariables) -> [String] {
        if let policies { return [policies] }
        var paths: [String] = []
        // stat, not FileManager: a `get` then never sets FileManager up (part of its start-up).
        var status = stat()
        if stat(Self.systemPolicies, &status) == 0 { paths.append(Self.systemPolicies) }
        let home =
            variables["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? FileManager.default.homeDirectoryForCurrentUser.path
        let config = variables["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
        paths.append(config + "/keygate/policies")
        return paths
    }

    /// Loads every policy of ``policyPaths(_:)``; any error fails the whole load (fail closed).
    func loadPolicies(_ variables: EnvironmentVariables) throws(KeygateError) -> PolicySet {
        try PolicyDirectory.load(policyPaths(variables))
    }
}
