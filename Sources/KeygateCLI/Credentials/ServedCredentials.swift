import FoundationEssentials
import Glibc
import KeygateLinux
import KeygatePolicy
import KeygateStore

/// What a credential helper served recently, so that git's `store` of the very credential a
/// `get` just returned (`git credential approve` after a successful fetch) changes nothing
/// and asks for no second proof.
///
/// Kept beside the proof records in `$XDG_RUNTIME_DIR/keygate/` (private to the user, gone at
/// logout): per item, a keyed digest (``SecretDigest``) of the stored lines and the time.
/// The key lives in the same private directory. A forged record can only make a `store` of
/// an identical credential a no-op; it never reveals or changes a value. Without a runtime
/// directory nothing is kept and every `store` of an existing item updates it.
struct ServedCredentials {
    let records: LockedFile
    let keyPath: String

    /// How long after a `get` an identical `store` is recognised.
    static let window: Int64 = 300

    private struct Entry: Codable {
        var service: String
        var account: String
        var digest: String
        var time: Int64
    }

    /// The records of this user, or nil without a private runtime directory (a warning on
    /// `console` says why).
    static func open(_ console: Console) -> ServedCredentials? {
        guard let runtime = LinuxWiring.proofRecords(console) else { return nil }
        return ServedCredentials(
            records: LockedFile(path: runtime.directory + "/served-\(runtime.uid).json"),
            keyPath: runtime.directory + "/served-\(runtime.uid).key")
    }

    /// The digest key, created on first use (0600).
    private func key() throws -> SecretData {
        if let existing = try LockedFile(path: keyPath).read(), existing.count == SecretDigest.keyLength {
            return SecretData(bytes: existing)
        }
        let key = SecretDigest.makeKey()
        var bytes = key.copyBytes()
        defer { SecretData.wipe(&bytes) }
        try LockedFile(path: keyPath).write(Data(bytes))
        return key
    }

    private func load() -> [Entry] {
        guard let data = try? records.read() else { return [] }
        return (try? JSONDecoder().decode([Entry].self, from: data)) ?? []
    }

    /// Remembers that `stored` was served (or stored) for the item now.
    func remember(service: String, account: String, stored: SecretData, now: Int64) {
        try? records.withLock {
            let digest = SecretDigest.digest(of: stored, key: try key()).hex
            var entries = load().filter { !($0.service == service && $0.account == account) }
            entries = entries.filter { now - $0.time <= Self.window }
            entries.append(Entry(service: service, account: account, digest: digest, time: now))
            try records.write(try JSONEncoder().encode(entries))
        }
    }

    /// Whether exactly `stored` was served or stored for the item within the window.
    func wasServed(service: String, account: String, stored: SecretData, now: Int64) -> Bool {
        (try? records.withLock { () -> Bool in
            let digest = SecretDigest.digest(of: stored, key: try key()).hex
            return load().contains {
                $0.service == service && $0.account == account && $0.digest == digest && now - $0.time <= Self.window
                    && $0.time <= now
            }
        }) ?? false
    }
}

extension Array where Element == UInt8 {
    /// Lower-case hexadecimal.
    var hex: String { map { String($0, radix: 16).leftPadded(to: 2) }.joined() }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
