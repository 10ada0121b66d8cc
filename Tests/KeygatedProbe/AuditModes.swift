import Glibc
import KeygateProtocol

// keygated-probe's audit modes (main.swift hands any command it does not know to
// `AuditModes.run`):
//   audit-show N   prints the caller's newest N records (0: all), one JSON line each
//   audit-verify   prints "verified N" when the trail is intact, "broken N PROBLEM" otherwise
// An error frame prints "error <status> <message>" and exits 1, as every mode does.

enum AuditModes {
    /// Runs `command` when it is an audit mode; false when it is not one.
    static func run(_ command: String, _ arguments: [String], _ client: inout Client) -> Bool {
        switch command {
        case "audit-show":
            guard let limit = arguments.first.flatMap({ UInt32($0) }) else { fail("usage: audit-show N") }
            guard case .auditRecords(let records) = client.request(.auditShow(limit: limit)) else {
                fail("unexpected reply")
            }
            for record in records { print(record) }
        case "audit-verify":
            guard case .auditVerified(let records, let problem) = client.request(.auditVerify) else {
                fail("unexpected reply")
            }
            print(problem.map { "broken \(records) \($0)" } ?? "verified \(records)")
        default:
            return false
        }
        return true
    }
}
