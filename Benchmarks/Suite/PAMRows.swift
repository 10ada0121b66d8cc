// One proof of presence through PAMAuthenticator (fresh handle, dedicated thread,
// pam_start + pam_authenticate + pam_acct_mgmt + pam_end, proof recorded in the context)
// under pam_wrapper with pam_matrix and pam_permit, in a throwaway service directory. The
// baseline is the same transaction written directly in C (shared/spec/pam-recipe.md, appendix A;
// Benchmarks/CBaseline/pam.c) on the calling thread, through the same loaded pam_wrapper and the
// same service files, measured in the same run: interleaved batches, medians.
// pam_unix needs a real account: measure it by hand with `keygate prove` (see README).

import Foundation
import Glibc
import KeygateBenchC
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
    let wrapper = "libpam_wrapper.so"
    let batches = max(scale.batches, 1)
    let perBatch = max(scale.proofs / batches, 1)
    for service in ["bench-matrix", "bench-permit"] {
        let authenticator = try PAMAuthenticator(
            configuration: .init(passcodeService: service, failureDelay: .zero, library: library),
            source: ProgrammaticPassphraseSource(passphrase: "bench-pw"))
        let context = AuthenticationContext()
        // Warm up (pam_wrapper copies its service directory on first use).
        _ = await authenticator.prove(.passcode, prompt: "bench", context: context)
        var proved = 0
        var baselineProved: Int64 = 0
        var samples: ([Double], [Double]) = ([], [])
        for batch in 0...batches {
            var start = now()
            for _ in 0..<perBatch {
                if case .proved = await authenticator.prove(.passcode, prompt: "bench", context: context) {
                    proved += 1
                }
            }
            let each = (now() - start) / Double(perBatch)
            start = now()
            baselineProved += max(kb_pam_transactions(wrapper, service, user, "bench-pw", Int64(perBatch)), 0)
            // Batch 0 warms up and is not kept.
            if batch > 0 {
                samples.0.append(each)
                samples.1.append((now() - start) / Double(perBatch))
            }
        }
        let (ours, base) = (median(samples.0), median(samples.1))
        let runs = (batches + 1) * perBatch
        let allProved = proved == runs && baselineProved == Int64(runs)
        table.add(
            Row(
                name: "\(service): \(proved)/\(runs) proved", ours: duration(ours),
                baselineName: "C transaction, same library and services (\(baselineProved)/\(runs) proved)",
                baseline: duration(base), ratio: ratio(ours, base),
                target: allProved ? "" : "**NOT ALL PROVED**"))
    }
}
