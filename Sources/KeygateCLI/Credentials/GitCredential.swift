import KeygatePolicy
import KeygateStore

/// One credential description of git's credential-helper protocol (`git-credential(1)`):
/// `key=value` lines up to a blank line or the end of input.
///
/// The item it maps to: service `git:<protocol>://<host>[/<path>]`, account the user name.
/// The value holds the secret lines exactly as git sent them (`password`,
/// `oauth_refresh_token`) and `password_expiry_utc`, so they come back as they were stored.
/// Everything else (`capability[]`, `wwwauth[]`, …) is not kept.
struct GitCredential {
    var protocolName: String?
    var host: String?
    var path: String?
    var username: String?
    /// The lines kept in the item's value, in wiped memory (empty when git sent none).
    var secret: SecretData

    /// The attributes whose lines are stored in the value.
    static let storedKeys: Set<String> = ["password", "oauth_refresh_token", "password_expiry_utc"]

    /// Parses a description. Lines without `=` and values with a NUL are refused, as git refuses them.
    init(parsing input: SecretData) throws(KeygateError) {
        var stored = [UInt8]()
        defer { SecretData.wipe(&stored) }
        var fields: [String: String] = [:]
        var failure: KeygateError?
        input.withUnsafeBytes { bytes in
            for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
                if line.isEmpty { break }
                guard let equals = line.firstIndex(of: UInt8(ascii: "=")), !line.contains(0) else {
                    failure = KeygateError(.param, "a credential line is not key=value")
                    return
                }
                let key = String(decoding: line[line.startIndex..<equals], as: UTF8.self)
                if Self.storedKeys.contains(key) {
                    stored += line
                    stored.append(UInt8(ascii: "\n"))
                } else if ["protocol", "host", "path", "username"].contains(key) {
                    guard let value = String(validating: line[(equals + 1)...], as: UTF8.self) else {
                        failure = KeygateError(.param, "the credential's \(key) is not valid UTF-8")
                        return
                    }
                    fields[key] = value
                }
            }
        }
        if let failure { throw failure }
        protocolName = fields["protocol"]
        host = fields["host"]
        path = fields["path"].flatMap { $0.isEmpty ? nil : $0 }
        username = fields["username"]
        secret = SecretData(bytes: stored)
    }

    /// The item's service, or nil when the description names no protocol and host.
    var service: String? {
        guard let protocolName, let host, !protocolName.isEmpty, !host.isEmpty else { return nil }
        return "git:\(protocolName)://\(host)" + (path.map { "/" + $0 } ?? "")
    }

    /// Whether the description carries a password (or a token) to store.
    var hasPassword: Bool {
        secret.withUnsafeBytes { bytes in
            bytes.split(separator: UInt8(ascii: "\n")).contains { $0.starts(with: Array("password=".utf8)) }
        }
    }

    /// Writes the answer to `get` to `output`: the user name, then the stored lines straight
    /// from their wiped buffer.
    static func writeAnswer(username: String, stored: SecretData, to output: any OutputTarget) throws(KeygateError) {
        try output.write(Array("username=\(username)\n".utf8))
        try stored.withUnsafeBytes { bytes throws(KeygateError) in try output.write(bytes) }
    }
}
