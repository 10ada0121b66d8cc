import Synchronization

/// A passphrase source that answers from code: a fixed passphrase, a scripted sequence, or
/// none (every prompt cancelled). It records the prompts it was asked and the messages it was
/// shown, for tests and for hosts that show them in their own UI.
public final class ProgrammaticPassphraseSource: PassphraseSource {
    private struct State {
        var answers: [String?]
        var repeatLast: Bool
        var prompts: [PassphrasePrompt] = []
        var messages: [PAMMessage] = []
    }

    private let state: Mutex<State>

    /// Answers every prompt with `passphrase`; nil cancels every prompt.
    public init(passphrase: String?) {
        state = Mutex(State(answers: [passphrase], repeatLast: true))
    }

    /// Answers prompts with `answers` in order (nil cancels that prompt); cancels once exhausted.
    public init(answers: [String?]) {
        state = Mutex(State(answers: answers, repeatLast: false))
    }

    /// Every prompt asked so far.
    public var prompts: [PassphrasePrompt] { state.withLock { $0.prompts } }

    /// Every message shown so far.
    public var messages: [PAMMessage] { state.withLock { $0.messages } }

    /// The next scripted answer.
    public func passphrase(for prompt: PassphrasePrompt) -> Passphrase? {
        let answer: String?? = state.withLock { state in
            state.prompts.append(prompt)
            guard let first = state.answers.first else { return .none }
            if !state.repeatLast || state.answers.count > 1 { state.answers.removeFirst() }
            return .some(first)
        }
        guard case .some(.some(let text)) = answer else { return nil }
        return Passphrase(text)
    }

    /// Records the message.
    public func show(_ message: PAMMessage) {
        state.withLock { $0.messages.append(message) }
    }
}
