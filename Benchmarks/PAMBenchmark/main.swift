// Measures one proof of presence through PAMAuthenticator (fresh handle, dedicated thread,
// pam_start + pam_authenticate + pam_acct_mgmt + pam_end, proof recorded in the context)
// against pam_wrapper with pam_matrix and pam_permit, in a throwaway service directory.
// The baseline is the same transaction written directly in C (shared/spec/pam-recipe.md §7:
// 94–103 µs with pam_matrix, 50–93 µs with pam_permit, on this kind of machine).
//
//     swift run -c release keygate-bench-pam [proofs]
//
// pam_unix is measured by hand with `keygate prove` (it needs a real account; see README).

import Foundation
import KeygatePAM
import KeygatePolicy

let proofs = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 2_000
let modules = "/usr/lib/x86_64-linux-gnu/pam_wrapper"
let root = FileManager.default.temporaryDirectory.appendingPathComponent("keygate-bench-pam-\(getpid())").path
let services = root + "/services"
try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: root) }
let user = try ProcessOwner.userName()
try "\(user):bench-pw:bench-matrix\n".write(toFile: root + "/passdb", atomically: true, encoding: .utf8)
try
    "auth required \(modules)/pam_matrix.so passdb=\(root)/passdb\naccount required \(modules)/pam_matrix.so passdb=\(root)/passdb\n"
    .write(toFile: services + "/bench-matrix", atomically: true, encoding: .utf8)
try "auth required pam_permit.so\naccount required pam_permit.so\n"
    .write(toFile: services + "/bench-permit", atomically: true, encoding: .utf8)
try "auth required pam_deny.so\naccount required pam_deny.so\n".write(
    toFile: services + "/other", atomically: true, encoding: .utf8)
setenv("PAM_WRAPPER_SERVICE_DIR", services, 1)
setenv("PAM_WRAPPER", "1", 1)
let library = try PAMLibrary.load("libpam_wrapper.so")
guard library.isWrapperActive else { fatalError("pam_wrapper is not active") }

func measure(service: String, baseline: String) async throws -> [String] {
    let authenticator = try PAMAuthenticator(
        configuration: .init(passcodeService: service, failureDelay: .zero, library: library),
        source: ProgrammaticPassphraseSource(passphrase: "bench-pw"))
    let context = AuthenticationContext()
    // Warm up (pam_wrapper copies its service directory on first use).
    _ = await authenticator.prove(.passcode, prompt: "bench", context: context)
    let clock = ContinuousClock()
    var proved = 0
    let elapsed = await clock.measure {
        for _ in 0..<proofs {
            if case .proved = await authenticator.prove(.passcode, prompt: "bench", context: context) { proved += 1 }
        }
    }
    let microseconds =
        (Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12) / Double(proofs)
    return [service, "\(proved)/\(proofs)", String(Int(microseconds.rounded())), baseline]
}

var rows = [["service", "proved", "µs/proof (Keygate)", "µs/transaction (C, recipe)"]]
rows.append(try await measure(service: "bench-matrix", baseline: "94–103"))
rows.append(try await measure(service: "bench-permit", baseline: "50–93"))
let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max()! }
for (index, row) in rows.enumerated() {
    print(row.enumerated().map { $1 + String(repeating: " ", count: widths[$0] - $1.count) }.joined(separator: "  "))
    if index == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
}
print("\n\(proofs) proofs per row, one fresh PAM handle and one dedicated thread each.")
