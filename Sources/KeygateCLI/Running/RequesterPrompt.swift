import KeygatePAM
import KeygatePolicy
import Synchronization

/// Asks a passphrase source a question on behalf of another program, naming that program first:
/// `keygate agent: PROGRAM (pid N) asks for PURPOSE`. On a terminal or in an askpass dialog the
/// line goes above the question; for a descriptor (which shows nothing) it goes to standard
/// error. What is shown comes from the kernel's view of the requester, never from its request.
enum RequesterPrompt {
    /// The line naming the requester (control characters escaped).
    static func header(_ speaker: String, program: String, pid: Int32, purpose: String) -> String {
        "\(speaker): \(Console.escaped(program)) (pid \(pid)) asks for \(Console.escaped(purpose))"
    }

    /// Asks `source` `text` (hidden unless `echo`), the header shown first.
    static func ask(
        _ source: any PassphraseSource, header: String, text: String, echo: Bool, service: String, factor: Factor,
        purpose: String, console: Console
    ) -> Passphrase? {
        let shown = !(source is FileDescriptorPassphraseSource)
        if !shown { console.err(header) }
        return source.passphrase(
            for: PassphrasePrompt(
                text: shown ? header + "\n" + text : text, echo: echo, service: service, factor: factor,
                reason: purpose))
    }
}

/// A passphrase source answering for one requester's PAM conversations: each question goes to
/// `base` with the requester named above it (``RequesterPrompt``), one question at a time across
/// every requester sharing `turn` (one terminal, one descriptor).
struct RequesterPassphraseSource: PassphraseSource {
    /// Where answers come from.
    let base: any PassphraseSource
    /// `keygate ssh-agent`, as the header's first word.
    let speaker: String
    /// The requester's executable and pid, from the kernel.
    let program: String
    let pid: Int32
    /// Serialises questions to `base`.
    let turn: QuestionTurn
    let console: Console

    func passphrase(for prompt: PassphrasePrompt) -> Passphrase? {
        let header = RequesterPrompt.header(speaker, program: program, pid: pid, purpose: prompt.reason)
        return turn.lock.withLock { _ in
            RequesterPrompt.ask(
                base, header: header, text: prompt.text, echo: prompt.echo, service: prompt.service,
                factor: prompt.factor, purpose: prompt.reason, console: console)
        }
    }

    func show(_ message: PAMMessage) { base.show(message) }
}

/// One question at a time to a passphrase source shared by several requesters.
final class QuestionTurn: Sendable {
    let lock = Mutex(())
}
