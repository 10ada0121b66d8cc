import Glibc
import Keygate
import KeygateProtocol
import KeygateStore

// The probe's relay modes, for the daemon's prompt-relay tests:
//   relay answer SERVICE ACCOUNT ANSWER [REUSE]   answers every prompt with ANSWER; the read asks
//                                                 for a reuse window of REUSE seconds (default 0)
//   relay cancel SERVICE ACCOUNT          sends cancel at the first prompt
//   relay silent SERVICE ACCOUNT          never answers (waits for the daemon's verdict)
//   relay fail SERVICE ACCOUNT - [REUSE]  reads with authenticationUI fail (may not prompt)
//   relay hang SERVICE ACCOUNT            prints "hanging pid=N" at the first prompt and sleeps until killed
//   relay intrude SERVICE ACCOUNT         sends another request (status) at the first prompt: out of order
//   lock                                  sends lock; prints "ok"
// Each relay mode prints "prompt STYLE TEXT" per prompt frame, then the value, or "error STATUS MESSAGE"
// (exit 1), or "connection closed" (exit 2).

enum RelayModes {
    /// Runs `command` when it is a relay mode; false for any other command.
    static func run(_ command: String, _ rest: [String], _ client: inout Client) -> Bool {
        if command == "lock" {
            _ = client.request(.lock)
            print("ok")
            return true
        }
        guard command == "relay", rest.count >= 3 else { return false }
        var relay = RelayClient(fd: client.fd, nextID: client.nextID)
        relay.read(
            mode: rest[0], service: rest[1], account: rest[2], answer: rest.count > 3 ? rest[3] : nil,
            reuse: rest.count > 4 ? UInt32(rest[4]) ?? 0 : 0)
        return true
    }
}

struct RelayClient {
    let fd: Int32
    var nextID: UInt32
    var decoder = FrameDecoder()
    var pending: [Frame] = []

    init(fd: Int32, nextID: UInt32) {
        self.fd = fd
        self.nextID = nextID
    }

    func send(_ message: Message, id: UInt32) {
        writeAll(try! message.frame(requestID: id).encoded(), to: fd)
    }

    mutating func next() -> Message {
        do {
            return try Message(nextFrame())
        } catch {
            fail("bad reply: \(error)")
        }
    }

    mutating func read(mode: String, service: String, account: String, answer: String?, reuse: UInt32) {
        let id = nextID
        nextID += 1
        let query = ItemQuery(
            service: service, account: account, returnData: true, authenticationUI: mode == "fail" ? .fail : nil)
        send(.copyMatching(query, reuseSeconds: reuse), id: id)
        while true {
            switch next() {
            case .prompt(let style, let text):
                print("prompt \(style.rawValue) \(text)")
                fflush(nil)
                guard style == .echoOff || style == .echoOn else { continue }
                switch mode {
                case "answer": send(.promptAnswer(SecretData(bytes: Array((answer ?? "").utf8))), id: id)
                case "cancel": send(.cancel, id: id)
                case "intrude": send(.status, id: id + 1)
                case "hang":
                    print("hanging pid=\(getpid())")
                    fflush(nil)
                    while true { sleep(60) }
                default: break  // silent
                }
            case .items(let items):
                guard let data = items.first?.data else { fail("no data") }
                print(data.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
                exit(0)
            case .error(let status, let text, let cause):
                print("error \(status) \(text)" + (cause.map { " [cause \($0)]" } ?? ""))
                exit(1)
            default:
                fail("unexpected reply")
            }
        }
    }
}
