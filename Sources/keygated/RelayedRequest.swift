import KeygatePolicy
import KeygateProtocol

/// What the relay changes about a request: the reuse window it asks for, and the status of a
/// request whose prompt ended without an answer for a reason the user did not choose.
enum RelayedRequest {
    /// The reuse window `message` asks for, 0...300 seconds (a larger one is refused with
    /// `errSecParam` by the handler before anything is proved).
    static func reuseSeconds(_ message: Message) -> Int {
        switch message {
        case .copyMatching(_, let seconds), .update(_, _, let seconds), .delete(_, let seconds):
            Int(min(seconds, ReuseWindow.maximumSeconds))
        default: 0
        }
    }

    /// The reply to send: `reply`, except that a cancel the daemon caused (no answer within
    /// `prompt-timeout`, no free prompt slot) is `errSecInteractionNotAllowed`, as Apple reports
    /// a prompt that may not be shown, with the reason as its cause (``KeygateError/Condition/promptTimedOut``,
    /// ``KeygateError/Condition/promptLimit``).
    static func final(_ reply: Message, ending: PromptRelay.Ending?, timeout: Int) -> Message {
        guard let ending, case .error(let status, _, _) = reply, status == KeygateStatus.userCanceled.rawValue else {
            return reply
        }
        let error =
            switch ending {
            case .timedOut:
                KeygateError(
                    .interactionNotAllowed, "no answer to the prompt within \(timeout) s", condition: .promptTimedOut)
            case .overLimit:
                KeygateError(
                    .interactionNotAllowed, "too many prompts are waiting; try again later", condition: .promptLimit)
            }
        return Message(error)
    }
}
