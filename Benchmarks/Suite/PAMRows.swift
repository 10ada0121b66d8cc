// One proof of presence through PAMAuthenticator (fresh handle, dedicated thread,
// pam_start + pam_authenticate + pam_acct_mgmt + pam_end, proof recorded in the context)
// under pam_wrapper with pam_matrix and pam_permit, in a throwaway service directory. The
// baseline is the same transaction written directly in C, as measured for
// shared/spec/pam-recipe.md §7 on this kind of machine (not re-measured here).
// pam_unix needs a real account: measure it by hand with `keygate prove` (see README).

import Foundation
import Glibc
import KeygatePAM
import KeygatePolicy

func pamRows(_ table: Table, scale: Scale) async throws {
    table.section("PAM proof under pam_wrapper (µs per proof)")
    let modules = "/usr/lib/x86_64-linux-gnu/pam_wrapper"
    let root = temporaryDirectory("pam")
    defer { removeTree(root) }
    let services = root + "/services"
    mkdir(services, 0o700)
    let user = try ProcessOwner.userName()
    func write(_ text: String, _ path: String) {
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
    }
    write("\(user):bench-pw:bench-matrix\n", root + "/passdb")
    write(
        "auth required \(modules)/pam_matrix.so passdb=\(root)/passdb\n"
            + "account required \(modules)/pam_matrix.so passdb=\(root)/passdb\n", services + "/bench-matrix")
    write("auth required pam_permit.so\naccount required pam_permit.so\n", services + "/bench-permit")
    write("auth required pam_deny.so\naccount required pam_deny.so\n", services + "/other")
    setenv("PAM_WRAPPER_SERVICE_DIR", services, 1)
    setenv("PAM_WRAPPER", "1", 1)
    defer {
        unsetenv("PAM_WRAPPER")
        unsetenv("PAM_WRAPPER_SERVICE_DIR")
    }
    let library = try PAMLibrary.load("libpam_wrapper.so")
    guard library.isWrapperActive else {
        table.add(Row(name: "PAM proof", ours: "pam_wrapper is not active"))
        return
    }
    for (service, low, high) in [("bench-matrix", 94.0, 103.0), ("bench-permit", 50.0, 93.0)] {
        let authenticator = try PAMAuthenticator(
            configuration: .init(passcodeService: service, failureDelay: .zero, library: library),
            source: ProgrammaticPassphraseSource(passphrase: "bench-pw"))
        let context = AuthenticationContext()
        // Warm up (pam_wrapper copies its service directory on first use).
        _ = await authenticator.prove(.passcode, prompt: "bench", context: context)
        var proved = 0
        let start = now()
        for _ in 0..<scale.proofs {
            if case .proved = await authenticator.prove(.passcode, prompt: "bench", context: context) { proved += 1 }
        }
        let micro = (now() - start) / Double(scale.proofs) * 1e6
        table.add(
            Row(
                name: "\(service): \(proved)/\(scale.proofs) proved", ours: format(micro, digits: 0) + " µs",
                baselineName: "C transaction (pam-recipe §7)", baseline: "\(Int(low))–\(Int(high)) µs",
                ratio: format(micro / high, digits: 2) + "–" + format(micro / low, digits: 2) + "×",
                target: proved == scale.proofs ? "" : "**NOT ALL PROVED**"))
    }
}
