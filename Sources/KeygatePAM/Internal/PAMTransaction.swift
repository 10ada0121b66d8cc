internal import CPAM
import Glibc

/// What one PAM transaction produced.
struct PAMTransactionResult: Sendable {
    /// Which call produced ``status``.
    enum Step: String, Sendable {
        case start, authenticate, accountManagement = "acct_mgmt"
    }

    let status: PAMStatus
    let step: Step
    /// `pam_strerror` of the status.
    let statusText: String
    /// The user cancelled a prompt.
    let cancelled: Bool
    /// How many prompts were answered or cancelled.
    let prompts: Int
    /// The last PAM_ERROR_MSG a module sent.
    let lastError: String?
}

/// No-op PAM_FAIL_DELAY hook: libpam calls it instead of sleeping on a failure, so no thread
/// waits inside libpam; Keygate applies its own back-off after the transaction.
private let noFailDelay: keygate_pam_delay_fn = { _, _, _ in }

/// One blocking PAM transaction on a fresh handle: pam_start, pam_authenticate,
/// pam_acct_mgmt, pam_end. Call it from a dedicated thread (modules block and sleep).
enum PAMTransaction {
    static func run(
        library: PAMLibrary, service: String, user: String, caller: PAMCaller = PAMCaller(),
        conversation: PAMConversation
    ) -> PAMTransactionResult {
        let functions = library.functions
        let retained = Unmanaged.passRetained(conversation)
        defer { retained.release() }
        var conv = pam_conv(conv: pamConversationFunction, appdata_ptr: retained.toOpaque())
        var handle: OpaquePointer?

        func result(_ code: Int32, _ step: PAMTransactionResult.Step) -> PAMTransactionResult {
            let text =
                handle.flatMap { functions.strerror($0, code) }.map { String(cString: $0) }
                ?? PAMStatus(rawValue: code).name
            return PAMTransactionResult(
                status: PAMStatus(rawValue: code), step: step, statusText: text, cancelled: conversation.cancelled,
                prompts: conversation.prompts, lastError: conversation.lastError)
        }

        let started = functions.start(service, user, &conv, &handle)
        guard started == PAM_SUCCESS, let pamh = handle else {
            let outcome = result(started, .start)
            if let pamh = handle { _ = functions.end(pamh, started) }
            return outcome
        }
        // Without the hook libpam would sleep on a failure inside the transaction: a libpam that
        // refuses it ends the attempt with its status (failing closed) instead of running on.
        var code = functions.setItem(pamh, PAM_FAIL_DELAY, keygate_pam_delay_item(noFailDelay))
        // The caller's description; PAM_RHOST stays unset (a local caller has no remote host).
        for (item, value) in [(PAM_TTY, caller.terminal), (PAM_RUSER, caller.remoteUser)] where code == PAM_SUCCESS {
            guard let value else { continue }
            code = functions.setItem(pamh, item, value)
        }
        var step = PAMTransactionResult.Step.start
        guard code == PAM_SUCCESS else {
            let outcome = result(code, step)
            _ = functions.end(pamh, code)
            return outcome
        }
        code = functions.authenticate(pamh, Int32(PAM_DISALLOW_NULL_AUTHTOK))
        step = .authenticate
        if code == PAM_SUCCESS {
            code = functions.acctMgmt(pamh, Int32(PAM_DISALLOW_NULL_AUTHTOK))
            step = .accountManagement
        }
        let outcome = result(code, step)
        // pam_end's own status only says whether the modules' cleanup ran; the attempt's outcome
        // is decided above and the handle is gone either way, so there is nothing left to fail.
        _ = functions.end(pamh, code)
        return outcome
    }
}
