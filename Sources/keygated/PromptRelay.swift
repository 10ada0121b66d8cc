import Dispatch
import KeygatePAM
import KeygatePolicy
import KeygateProtocol
import KeygateStore
import Synchronization

/// The PAM conversation of one connection, relayed over its socket: a ``PassphraseSource``
/// that sends each PAM prompt as a `prompt` frame under the id of the request in flight and
/// waits (on the PAM thread, never on the reading thread or the concurrency pool) for that
/// request's `promptAnswer`, its `cancel`, the client's disconnect, or `prompt-timeout`.
///
/// - an answer goes to PAM (copied once into a wiped-on-release ``Passphrase``; the frame's
///   ``SecretData`` are wiped when released);
/// - a cancel or a disconnect answers nil: the module aborts, the transaction ends (`pam_end`)
///   and the request is `errSecUserCanceled`; every later prompt of that request is refused
///   at once;
/// - no answer in time answers nil too, and marks the request ``Ending/timedOut``: the
///   connection reports `errSecInteractionNotAllowed` instead of the cancel.
///
/// Info and error messages (PAM_TEXT_INFO, PAM_ERROR_MSG) are sent as prompt styles 4 and 3
/// without waiting; they expect no answer.
final class PromptRelay: PassphraseSource {
    /// Why a request's prompt ended without an answer, when the status must say so.
    enum Ending: Sendable, Equatable {
        /// Nothing came within `prompt-timeout` seconds.
        case timedOut
        /// No prompt slot was free (`max-prompts`, `max-prompts-per-user`).
        case overLimit
    }

    /// What the request in flight may reuse and where it runs.
    struct Scope: Sendable {
        var requestID: UInt32
        /// The reuse window the request asked for, 0...300 seconds.
        var reuseSeconds: Int
        /// The caller's pidfd, from which its terminal is read when a proof is needed (only
        /// then: a plain request costs no /proc read).
        var pidfd: Int32
    }

    private enum Delivery: Sendable {
        case answer(Passphrase)
        case cancel
    }

    private struct State: Sendable {
        var scope: Scope?
        /// The semaphore a waiting prompt sleeps on, and what was delivered to it.
        var waiting: DispatchSemaphore?
        var delivery: Delivery?
        /// The request was cancelled, or the client left: no more prompts for it.
        var ended = false
        var disconnected = false
        var ending: Ending?
        /// Factors whose proof in the request's context came from ``ProofCache`` (no PAM ran
        /// for them in this request), for the audit record.
        var reused = FactorSet()
    }

    private let wire: Wire
    private let timeoutSeconds: Int
    private let state = Mutex(State())

    init(wire: Wire, timeoutSeconds: Int) {
        self.wire = wire
        self.timeoutSeconds = timeoutSeconds
    }

    // MARK: - The connection's side

    /// A request begins (called by the reading thread before the request is handed over).
    func begin(_ scope: Scope) {
        state.withLock { state in
            state.scope = scope
            state.ended = state.disconnected
            state.delivery = nil
            state.waiting = nil
            state.ending = nil
            state.reused = FactorSet()
        }
    }

    /// The request ended; returns why its prompt ended, when the status must say so.
    func finish() -> Ending? {
        state.withLock { state in
            defer {
                state.scope = nil
                state.ending = nil
                state.delivery = nil
                state.reused = FactorSet()
            }
            return state.ending
        }
    }

    /// The scope of the request in flight.
    var scope: Scope? { state.withLock { $0.scope } }

    /// The factors whose proof the request in flight took from ``ProofCache``, and has not
    /// proved afresh since.
    var reusedFactors: FactorSet { state.withLock { $0.reused } }

    /// The request in flight counts remembered proofs of `factors` (its context holds them).
    func reused(_ factors: FactorSet) { state.withLock { $0.reused.formUnion(factors) } }

    /// The request in flight proved `factors` through PAM: their proofs are fresh.
    func provedAfresh(_ factors: FactorSet) { state.withLock { $0.reused.subtract(factors) } }

    /// A `promptAnswer` arrived (the sequence check already matched it to the outstanding
    /// prompt). A late answer, after a timeout, is dropped and wiped.
    func deliver(_ answer: SecretData?) {
        let passphrase = answer.map { bytes in bytes.withUnsafeBytes { Passphrase(bytes: $0) } }
        state.withLock { state in
            guard let waiting = state.waiting, state.delivery == nil else { return }
            state.delivery = passphrase.map(Delivery.answer) ?? .cancel
            waiting.signal()
        }
    }

    /// The client cancelled the request in flight.
    func cancel() { end(disconnected: false) }

    /// The client left (or the connection is closing): any waiting prompt ends now.
    func disconnect() { end(disconnected: true) }

    private func end(disconnected: Bool) {
        state.withLock { state in
            state.ended = true
            if disconnected { state.disconnected = true }
            guard let waiting = state.waiting, state.delivery == nil else { return }
            state.delivery = .cancel
            waiting.signal()
        }
    }

    /// Marks the request in flight as refused a prompt slot.
    func refuseForLimit() { state.withLock { $0.ending = .overLimit } }

    // MARK: - PassphraseSource (the PAM thread's side)

    func passphrase(for prompt: PassphrasePrompt) -> Passphrase? {
        let semaphore = DispatchSemaphore(value: 0)
        let requestID: UInt32? = state.withLock { state in
            guard let scope = state.scope, !state.ended else { return nil }
            state.waiting = semaphore
            state.delivery = nil
            return scope.requestID
        }
        guard let requestID else { return nil }
        let style: PromptStyle = prompt.echo ? .echoOn : .echoOff
        let sent = wire.prompt(.prompt(style: style, text: prompt.text), requestID: requestID, expectsAnswer: true)
        let answered = sent && semaphore.wait(timeout: .now() + .seconds(timeoutSeconds)) == .success
        return state.withLock { state -> Passphrase? in
            defer {
                state.waiting = nil
                state.delivery = nil
            }
            guard answered, case .answer(let passphrase) = state.delivery else {
                state.ended = true
                if sent && state.delivery == nil { state.ending = .timedOut }
                return nil
            }
            return passphrase
        }
    }

    func show(_ message: PAMMessage) {
        guard let requestID = state.withLock({ $0.ended ? nil : $0.scope?.requestID }) else { return }
        let style: PromptStyle = message.kind == .info ? .textInfo : .errorMessage
        _ = wire.prompt(.prompt(style: style, text: message.text), requestID: requestID, expectsAnswer: false)
    }
}
