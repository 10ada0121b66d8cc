import KeygatePAM
import KeygatePolicy
import KeygateProtocol
import KeygateStore
import Synchronization

/// The PAM conversation of one connection, relayed over its socket: a ``PassphraseSource``
/// that sends each PAM prompt as a `prompt` frame under the id of the request in flight and
/// then reads the socket itself (on the PAM thread; the connection's thread is running the
/// request and waits for it), polling for at most `prompt-timeout` seconds:
///
/// - a `promptAnswer` goes to PAM (copied once into a wiped-on-release ``Passphrase``; the
///   frame's ``SecretData`` are wiped when released);
/// - a `cancel`, or the client's disconnect, answers nil: the module aborts, the transaction
///   ends (`pam_end`) and the request is `errSecUserCanceled`; every later prompt of that
///   request is refused at once;
/// - no answer in time answers nil too, and marks the request as timed out
///   (``promptTimedOut``): its authenticator reports the attempt as not allowed
///   (`errSecInteractionNotAllowed`, cause ``KeygateError/Condition/promptTimedOut``), not as a cancel;
/// - any other frame is out of order: the connection ends with an error frame, and the
///   request as cancelled.
///
/// Before each prompt, and before each info or error message (PAM_TEXT_INFO, PAM_ERROR_MSG,
/// sent as prompt styles 4 and 3 without waiting; they expect no answer), the frames that
/// have already come are read without waiting, so a `cancel` sent before any prompt (while
/// the facade evaluated, or a module worked without a conversation) ends the request at its
/// first prompt.
///
/// A frontend with no prompt channel (the SSH agent protocol) has a relay without a connection
/// (``init(timeoutSeconds:)``): it carries the request in flight and the attempt's bookkeeping to
/// the authenticator, which asks the session's agent instead; it answers every prompt nil.
final class PromptRelay: PassphraseSource {
    /// How the connection itself fared while a request read its socket.
    enum Loss: Sendable, Equatable {
        /// The client closed its end (or the socket failed).
        case disconnected
        /// The client broke the protocol; the error frame has been sent.
        case refused
    }

    /// The request in flight and the id its prompts go under.
    struct Scope: Sendable {
        var requestID: UInt32
        var request: DaemonRequest
    }

    private struct State: Sendable {
        var scope: Scope?
        /// The request was cancelled, or the client left: no more prompts for it.
        var ended = false
        var loss: Loss?
        /// No answer came in time to one of this request's prompts.
        var promptTimedOut = false
        /// The authentication agent the request's last attempt was asked through, if any.
        var askedAgent: String?
        /// The last request whose prompt went unanswered in time: its answer may still come.
        var timedOut: UInt32?
    }

    /// The connection prompts are relayed over.
    private struct Channel: Sendable {
        let wire: Wire
        let reader: FrameReader
    }

    private let channel: Channel?
    private let timeoutSeconds: Int
    private let state = Mutex(State())

    /// A relay over the connection `wire` writes and `reader` reads, each prompt waiting at
    /// most `timeoutSeconds` for its answer.
    init(wire: Wire, reader: FrameReader, timeoutSeconds: Int) {
        self.channel = Channel(wire: wire, reader: reader)
        self.timeoutSeconds = timeoutSeconds
    }

    /// A relay for a frontend with no prompt channel: nothing is relayed (every prompt is
    /// answered nil); an agent asked instead waits at most `timeoutSeconds`.
    init(timeoutSeconds: Int) {
        self.channel = nil
        self.timeoutSeconds = timeoutSeconds
    }

    // MARK: - The connection's side

    /// A request begins (called by the connection's thread before it runs the request).
    func begin(_ scope: Scope) {
        state.withLock { state in
            state.scope = scope
            state.ended = state.loss != nil
            state.promptTimedOut = false
        }
    }

    /// The request ended.
    func finish() {
        state.withLock { state in
            state.scope = nil
            state.promptTimedOut = false
        }
    }

    /// Whether one of the request's prompts went unanswered within `prompt-timeout` (the
    /// conversation then answered nil, which PAM reports as a cancel).
    var promptTimedOut: Bool { state.withLock { $0.promptTimedOut } }

    /// The authentication agent the request's last attempt was asked through (its pid and
    /// program), set by the request's authenticator; nil when the client itself was asked.
    var askedAgent: String? {
        get { state.withLock { $0.askedAgent } }
        set { state.withLock { $0.askedAgent = newValue } }
    }

    /// How long a prompt waits for its answer.
    var timeout: Int { timeoutSeconds }

    /// Whether the client left or broke the protocol while a request read the socket (the
    /// connection then ends after that request).
    var loss: Loss? { state.withLock { $0.loss } }

    /// The scope of the request in flight.
    var scope: Scope? { state.withLock { $0.scope } }

    /// Whether `frame` (read by the connection's thread after the request's reply) is the
    /// answer to a prompt that timed out, sent before the client saw the reply: it is dropped
    /// (and wiped) instead of breaking the order.
    func isLateAnswer(_ frame: Frame) -> Bool {
        guard frame.type == .promptAnswer else { return false }
        return state.withLock { state in
            defer { state.timedOut = nil }
            return state.timedOut == frame.requestID
        }
    }

    // MARK: - PassphraseSource (the PAM thread's side)

    func passphrase(for prompt: PassphrasePrompt) -> Passphrase? {
        guard let channel, let requestID = openRequest(), readArrived(channel) else { return nil }
        let style: PromptStyle = prompt.echo ? .echoOn : .echoOff
        guard channel.wire.prompt(.prompt(style: style, text: prompt.text), requestID: requestID, expectsAnswer: true)
        else {
            state.withLock { $0.ended = true }
            return nil
        }
        let deadline = FrameReader.monotonicMilliseconds() + Int64(timeoutSeconds) * 1000
        while true {
            switch outcome(of: channel.reader.next(deadline: deadline), channel) {
            case .answered(let passphrase): return passphrase
            case .ended: return nil
            case .carryOn: continue
            case nil:
                state.withLock { state in
                    state.ended = true
                    state.promptTimedOut = true
                    state.timedOut = requestID
                }
                return nil
            }
        }
    }

    func show(_ message: PAMMessage) {
        guard let channel, let requestID = openRequest(), readArrived(channel) else { return }
        let style: PromptStyle = message.kind == .info ? .textInfo : .errorMessage
        _ = channel.wire.prompt(.prompt(style: style, text: message.text), requestID: requestID, expectsAnswer: false)
    }

    // MARK: - Reading the socket for the request

    private enum Outcome {
        case answered(Passphrase)
        case ended
        case carryOn
    }

    /// The id of the request in flight, unless it may prompt no more.
    private func openRequest() -> UInt32? {
        state.withLock { state in state.ended ? nil : state.scope?.requestID }
    }

    /// Reads, without waiting, the frames that have come since the request began; false when
    /// one of them ended it (a `cancel`, a disconnect, a frame out of order).
    private func readArrived(_ channel: Channel) -> Bool {
        while true {
            switch outcome(of: channel.reader.next(deadline: 0), channel) {
            case .answered, .ended: return false
            case .carryOn: continue
            case nil: return true
            }
        }
    }

    /// What one read of the socket means for the request: a frame acted on (``act(on:)``), a
    /// disconnect or bytes that are no frame ending it; nil when nothing (whole) came in time.
    private func outcome(of read: FrameReader.Read, _ channel: Channel) -> Outcome? {
        switch read {
        case .frame(var frame):
            defer { frame.wipe() }
            return act(on: frame, channel)
        case .timedOut:
            return nil
        case .closed:
            lose(.disconnected)
            return .ended
        case .broken(let error):
            channel.wire.refuse(error)
            lose(.refused)
            return .ended
        }
    }

    /// Checks `frame` against the order and acts on it: an answer (nil: a cancel), a cancel,
    /// a late cancel (nothing), anything else a protocol error that ends the connection.
    private func act(on frame: Frame, _ channel: Channel) -> Outcome {
        guard let message = channel.wire.admit(frame) else {
            lose(.refused)
            return .ended
        }
        switch message {
        case .promptAnswer(let answer?):
            return .answered(answer.withUnsafeBytes { Passphrase(bytes: $0) })
        case .promptAnswer(nil), .cancel:
            state.withLock { $0.ended = true }
            return .ended
        default:
            // The sequence check admits nothing else while a request is in flight.
            channel.wire.refuse(.outOfOrder("\(frame.type) while request \(frame.requestID) waits"))
            lose(.refused)
            return .ended
        }
    }

    private func lose(_ loss: Loss) {
        state.withLock { state in
            state.ended = true
            if state.loss == nil { state.loss = loss }
        }
    }
}
