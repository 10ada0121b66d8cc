import Glibc
import Keygate
import KeygateProtocol
import KeygateStore

// The probe's cancel modes, for the relay's cancel tests:
//   early SERVICE ACCOUNT ANSWER       sends the read, then at once (before any prompt) a cancel
//                                      for it; a prompt that still comes is answered with ANSWER,
//                                      so a cancel the daemon dropped shows as the value
//   late SERVICE ACCOUNT ANSWER        reads (answering every prompt with ANSWER), then sends a
//                                      cancel for that finished request, then reads again on the
//                                      same connection
// Each prints "prompt STYLE TEXT" per prompt frame and, per read, the value or "error STATUS
// MESSAGE"; exit 0 when every read gave a value, 1 otherwise, 2 on a broken connection.

enum CancelModes {
    /// Runs `command` when it is a cancel mode; false for any other command.
    static func run(_ command: String, _ rest: [String], _ client: inout Client) -> Bool {
        guard command == "early" || command == "late", rest.count >= 3 else { return false }
        var relay = RelayClient(fd: client.fd, nextID: client.nextID)
        let query = ItemQuery(service: rest[0], account: rest[1], returnData: true)
        var allRead = true
        if command == "early" {
            let id = relay.nextID
            relay.nextID += 1
            // One write for both frames: the daemon reads the cancel with the request.
            let request = try! Message.copyMatching(query, reuseSeconds: 0).frame(requestID: id).encoded()
            let cancel = try! Message.cancel.frame(requestID: id).encoded()
            writeAll(request + cancel, to: relay.fd)
            allRead = relay.outcome(of: id, answer: rest[2])
        } else {
            let first = relay.nextID
            relay.nextID += 1
            relay.send(.copyMatching(query, reuseSeconds: 0), id: first)
            allRead = relay.outcome(of: first, answer: rest[2])
            relay.send(.cancel, id: first)
            let second = relay.nextID
            relay.nextID += 1
            relay.send(.copyMatching(query, reuseSeconds: 0), id: second)
            allRead = relay.outcome(of: second, answer: rest[2]) && allRead
        }
        exit(allRead ? 0 : 1)
    }
}

extension RelayClient {
    /// Waits for the reply to request `id`, answering every prompt with `answer`; prints the
    /// prompts and the outcome; true when the reply was a value.
    mutating func outcome(of id: UInt32, answer: String) -> Bool {
        while true {
            switch next() {
            case .prompt(let style, let text):
                print("prompt \(style.rawValue) \(text)")
                fflush(nil)
                guard style == .echoOff || style == .echoOn else { continue }
                send(.promptAnswer(SecretData(bytes: Array(answer.utf8))), id: id)
            case .items(let items):
                guard let data = items.first?.data else { fail("no data") }
                print(data.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
                fflush(nil)
                return true
            case .error(let status, let text, _):
                print("error \(status) \(text)")
                fflush(nil)
                return false
            default:
                fail("unexpected reply")
            }
        }
    }
}
