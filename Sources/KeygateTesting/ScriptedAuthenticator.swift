public import KeygatePolicy
import Synchronization

/// An authenticator that proves factors from a script instead of asking anyone, and records
/// every prompt: queue outcomes per factor (succeed, fail, cancel, lock out); a factor with
/// an empty queue uses its default (succeed, unless set otherwise).
public final class ScriptedAuthenticator: Authenticator {
    /// What one scripted attempt does.
    public enum Step: Hashable, Sendable {
        /// The factor is proved.
        case succeed
        /// The attempt fails (wrong password, no match).
        case fail
        /// The user cancels.
        case cancel
        /// The factor is locked out.
        case lockOut
        /// The mechanism is not available.
        case unavailable
    }

    /// One prompt the authenticator was asked to satisfy.
    public struct Prompt: Hashable, Sendable {
        /// The factor tried.
        public let factor: Factor
        /// The operation prompt text.
        public let text: String
        /// The operation that asked, when a keychain operation did.
        public let operation: Operation?
        /// The item the operation was about, when there was one.
        public let item: ItemIdentity?

        /// A prompt record.
        public init(factor: Factor, text: String, operation: Operation? = nil, item: ItemIdentity? = nil) {
            self.factor = factor
            self.text = text
            self.operation = operation
            self.item = item
        }
    }

    private struct State {
        var queues: [Factor: [Step]] = [:]
        var defaults: [Factor: Step] = [:]
        var prompts: [Prompt] = []
    }

    private let state = Mutex(State())

    /// An authenticator whose factors succeed unless scripted otherwise.
    public init() {}

    /// Queues `steps` for `factor`, used in order.
    public func enqueue(_ steps: Step..., for factor: Factor) {
        state.withLock { $0.queues[factor, default: []].append(contentsOf: steps) }
    }

    /// What `factor` does once its queue is empty.
    public func setDefault(_ step: Step, for factor: Factor) {
        state.withLock { $0.defaults[factor] = step }
    }

    /// Every prompt so far, in order.
    public var prompts: [Prompt] { state.withLock { $0.prompts } }

    /// The prompts for one factor.
    public func prompts(for factor: Factor) -> [Prompt] { prompts.filter { $0.factor == factor } }

    /// Tries the alternatives in order, like a real authenticator, recording proofs and failures.
    public func authenticate(_ requirement: Requirement, prompt: String, context: AuthenticationContext) async
        -> AuthenticationOutcome
    {
        await authenticate(requirement, for: AuthenticationPurpose(prompt: prompt), context: context)
    }

    /// Tries the alternatives in order, recording each prompt with the operation and item that asked.
    public func authenticate(
        _ requirement: Requirement, for purpose: AuthenticationPurpose, context: AuthenticationContext
    ) async -> AuthenticationOutcome {
        await requirement.prove { factor in
            if let until = context.lockout(of: factor) { return .lockedOut(factor, until: until) }
            let step = state.withLock { state -> Step in
                state.prompts.append(
                    Prompt(factor: factor, text: purpose.prompt, operation: purpose.operation, item: purpose.item))
                if var queue = state.queues[factor], !queue.isEmpty {
                    let next = queue.removeFirst()
                    state.queues[factor] = queue
                    return next
                }
                return state.defaults[factor] ?? .succeed
            }
            switch step {
            case .succeed:
                context.recordProof(of: factor)
                return .proved(FactorSet(factor))
            case .fail:
                let until = context.recordFailure(of: factor)
                return until.map { .lockedOut(factor, until: $0) } ?? .failed(factor, message: "scripted failure")
            case .cancel:
                return .cancelled
            case .lockOut:
                return .lockedOut(factor, until: nil)
            case .unavailable:
                return .unavailable("scripted: \(factor) unavailable")
            }
        }
    }
}
