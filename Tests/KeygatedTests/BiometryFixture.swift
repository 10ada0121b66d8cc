import Foundation
import Glibc
import Testing

/// A ``RelayFixture`` whose daemon can also prove biometry: PAM service `keygate-biometry`
/// (pam_matrix under pam_wrapper, like `keygate`) with its own secrets, whose passdb entries
/// name that service only, so a biometry proof shows the daemon ran `keygate-biometry` and
/// not `keygate`; and `enrollment-file` in the daemon's configuration, a file the test
/// rewrites to change the enrolled set.
final class BiometryFixture {
    /// What each client "presents" to the biometry service (pam_matrix asks it as a passphrase).
    static let fingers: [UInt32: String] = [DaemonFixture.userA: "finger-a", DaemonFixture.userB: "finger-b"]

    let relay: RelayFixture
    var daemon: DaemonFixture { relay.daemon }
    /// The configured enrollment file (not written until ``enroll(_:)``).
    let enrollmentFile: String

    init() throws {
        relay = try RelayFixture()
        let pam = relay.daemon.directory + "/pam"
        enrollmentFile = relay.daemon.directory + "/enrolled"
        var passdb = ""
        for (uid, name) in RelayFixture.names.sorted(by: { $0.key < $1.key }) {
            passdb += "\(name):\(Self.fingers[uid]!):keygate-biometry\n"
        }
        try passdb.write(toFile: pam + "/biometry-passdb", atomically: true, encoding: .utf8)
        let users = RelayFixture.names.values.sorted().joined(separator: ":")
        let modules = RelayFixture.modules
        try
            ("auth requisite pam_succeed_if.so quiet ruser in \(users)\n"
            + "auth required \(modules)/pam_matrix.so passdb=\(pam)/biometry-passdb\n"
            + "account required \(modules)/pam_matrix.so passdb=\(pam)/biometry-passdb\n")
            .write(toFile: pam + "/services/keygate-biometry", atomically: true, encoding: .utf8)
        let config = try #require(relay.daemon.configPath)
        let lines = try String(contentsOfFile: config, encoding: .utf8) + "enrollment-file = \(enrollmentFile)\n"
        try lines.write(toFile: config, atomically: true, encoding: .utf8)
    }

    /// Makes `templates` the enrolled set (one template id a line).
    func enroll(_ templates: [String]) throws {
        try (templates.joined(separator: "\n") + "\n").write(toFile: enrollmentFile, atomically: true, encoding: .utf8)
    }

    /// No enrollment: the file is gone (biometry unavailable).
    func unenroll() { unlink(enrollmentFile) }

    /// Adds an item `service`/`account` = `value` protected by `flags` (`biometryAny`,
    /// `biometryCurrentSet`) as `uid`: the probe's output.
    func add(as uid: UInt32, _ service: String, _ account: String, _ value: String, _ flags: String) throws
        -> DaemonFixture.Result
    {
        try daemon.probe(as: uid, "add", service, account, value, flags)
    }
}
