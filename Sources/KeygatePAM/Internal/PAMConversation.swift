internal import CPAM
import Glibc
import KeygatePolicy
import Synchronization

/// The Swift side of one PAM conversation: answers prompts from a passphrase source,
/// passes messages on, and remembers whether the user cancelled, because modules report a
/// cancel as PAM_AUTHTOK_ERR or PAM_AUTHINFO_UNAVAIL, never as PAM_CONV_ERR.
final class PAMConversation: @unchecked Sendable {
    let source: any PassphraseSource
    let service: String
    let factor: Factor
    let reason: String
    // Touched only on the PAM thread that owns the transaction.
    private(set) var cancelled = false
    private(set) var prompts = 0
    private(set) var messages: [PAMMessage] = []

    init(source: any PassphraseSource, service: String, factor: Factor, reason: String) {
        self.source = source
        self.service = service
        self.factor = factor
        self.reason = reason
    }

    /// The last error message a module sent, if any.
    var lastError: String? { messages.last { $0.kind == .error }?.text }

    /// Answers one prompt: a malloc'ed copy for PAM, or nil when the user cancelled.
    func answer(_ text: String, echo: Bool) -> UnsafeMutablePointer<CChar>? {
        prompts += 1
        let prompt = PassphrasePrompt(text: text, echo: echo, service: service, factor: factor, reason: reason)
        guard let passphrase = source.passphrase(for: prompt) else {
            cancelled = true
            return nil
        }
        return passphrase.makeUnsafeCStringCopy()
    }

    func show(_ kind: PAMMessage.Kind, _ text: String) {
        let message = PAMMessage(kind: kind, text: text, service: service)
        messages.append(message)
        source.show(message)
    }
}

/// Frees a partly filled response array, wiping each answer first (PAM frees it only on success).
private func freeResponses(_ replies: UnsafeMutablePointer<pam_response>, count: Int) {
    for index in 0..<count {
        if let answer = replies[index].resp {
            explicit_bzero(answer, strlen(answer))
            free(answer)
        }
    }
    free(replies)
}

/// The C conversation function. It captures nothing; its state arrives through `appdata`,
/// an unretained pointer to a `PAMConversation` kept alive by the transaction until pam_end.
let pamConversationFunction:
    @convention(c) (
        Int32, UnsafeMutablePointer<UnsafePointer<pam_message>?>?,
        UnsafeMutablePointer<UnsafeMutablePointer<pam_response>?>?, UnsafeMutableRawPointer?
    ) -> Int32 = { count, messages, responses, appdata in
        guard count > 0, count <= PAM_MAX_NUM_MSG, let messages, let responses, let appdata else { return PAM_CONV_ERR }
        let conversation = Unmanaged<PAMConversation>.fromOpaque(appdata).takeUnretainedValue()
        let total = Int(count)
        guard let raw = calloc(total, MemoryLayout<pam_response>.stride) else { return PAM_BUF_ERR }
        let replies = raw.bindMemory(to: pam_response.self, capacity: total)
        for index in 0..<total {
            guard let message = messages[index]?.pointee else {
                freeResponses(replies, count: total)
                return PAM_CONV_ERR
            }
            let text = message.msg.map { String(cString: $0) } ?? ""
            switch message.msg_style {
            case PAM_PROMPT_ECHO_OFF, PAM_PROMPT_ECHO_ON:
                guard let answer = conversation.answer(text, echo: message.msg_style == PAM_PROMPT_ECHO_ON) else {
                    freeResponses(replies, count: total)
                    return PAM_CONV_ERR
                }
                replies[index].resp = answer
            case PAM_TEXT_INFO:
                conversation.show(.info, text)
            case PAM_ERROR_MSG:
                conversation.show(.error, text)
            default:
                // PAM_RADIO_TYPE, PAM_BINARY_PROMPT: not supported; abort the conversation.
                freeResponses(replies, count: total)
                return PAM_CONV_ERR
            }
            replies[index].resp_retcode = 0
        }
        responses.pointee = replies
        return PAM_SUCCESS
    }
