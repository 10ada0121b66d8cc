import Glibc
import Keygate
import KeygatePolicy
import KeygateProtocol
import KeygateStore

// keygated-probe SOCKET COMMAND ARGS: a minimal protocol client for KeygatedTests, run as other
// uids through setpriv. Prints one line per result; "error <status> <message>" and exit 1 on an
// error frame, exit 2 on a broken connection.
//   status | add SERVICE ACCOUNT VALUE [presence|biometryAny|biometryCurrentSet] | get SERVICE ACCOUNT
//   update SERVICE ACCOUNT VALUE
//   delete SERVICE ACCOUNT | count | add-many PREFIX N (prints "acked I" after each acknowledged add)
//   stall (sends hello and a request, then never reads; sleeps until killed)
//   unasked SERVICE ACCOUNT [PROMPT] (says in hello it answers no prompt, then reads the value: a proof
//     it needs is asked of its session's authentication agent; prints the value, or
//     "error <status> <message> [cause <cause>]")

let group = "probe.group"

func fail(_ text: String) -> Never {
    print(text)
    exit(2)
}

/// Writes `bytes` whole to `fd`. It stops early when the daemon has refused the connection (an
/// error frame, then close) before the request went out: the reply read next says why.
func writeAll(_ bytes: [UInt8], to fd: Int32) {
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes {
            Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
        }
        if written <= 0 { return }
        offset += written
    }
}

struct Client {
    let fd: Int32
    var decoder = FrameDecoder()
    var nextID: UInt32 = 1

    init(path: String) {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let connected = UnixSocketAddress(path: path)?.connect(fd) ?? -1
        if connected != 0 { fail("connect failed errno \(errno)") }
    }

    mutating func send(_ message: Message) {
        writeAll(try! message.frame(requestID: nextID).encoded(), to: fd)
        nextID += 1
    }

    mutating func receive() -> Message {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { fail("connection closed") }
            do {
                let frames = try decoder.append(buffer[0..<count])
                if let frame = frames.first { return try Message(frame) }
            } catch {
                fail("bad reply: \(error)")
            }
        }
    }

    mutating func request(_ message: Message) -> Message {
        send(message)
        let reply = receive()
        if case .error(let status, let text, _) = reply {
            print("error \(status) \(text)")
            exit(1)
        }
        return reply
    }
}

signal(SIGPIPE, SIG_IGN)
let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2 else { fail("usage: keygated-probe SOCKET COMMAND ...") }
var client = Client(path: arguments[0])
// The daemon speaks first: its challenge, which hello echoes (or an error frame: the refusal).
switch client.receive() {
case .challenge(let nonce):
    _ = client.request(
        .hello(
            minimumVersion: FrameLimits.version, maximumVersion: FrameLimits.version, accessGroups: [group],
            client: "probe", challenge: nonce, answersPrompts: arguments[1] != "unasked"))
case .error(let status, let text, _):
    print("error \(status) \(text)")
    exit(1)
case let other:
    fail("the daemon began with \(other.type), not a challenge")
}
let command = arguments[1]
let rest = Array(arguments.dropFirst(2))

func value(_ text: String) -> SecretData { SecretData(text) }

switch command {
case "unasked":
    client.send(
        .copyMatching(
            ItemQuery(
                service: rest[0], account: rest[1], returnData: true, operationPrompt: rest.count > 2 ? rest[2] : nil)
        ))
    switch client.receive() {
    case .items(let items):
        print(items.first?.data.map { data in data.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } } ?? "")
    case .error(let status, let text, let cause):
        print("error \(status) \(text)" + (cause.map { " [cause \($0)]" } ?? ""))
        exit(1)
    case let other:
        fail("unexpected \(other.type)")
    }
case "status":
    guard case .statusReply(let status) = client.request(.status) else { fail("unexpected reply") }
    print("mode=\(status.mode) uid=\(status.uid) gid=\(status.gid) pid=\(status.pid) pidfd=\(status.pidfdSource)")
    print("exe=\(status.executable)")
    print("version=\(status.daemonVersion)")
case "add":
    var protection = ItemProtection.accessible(.default)
    // PROTECTION: presence (userPresence), biometryAny or biometryCurrentSet.
    let flags: [String: AccessControlFlags] = [
        "presence": .userPresence, "biometryAny": .biometryAny, "biometryCurrentSet": .biometryCurrentSet,
    ]
    if rest.count > 3, let chosen = flags[rest[3]] {
        protection = .accessControl(try! AccessControl(protection: .whenUnlocked, flags: chosen))
    }
    _ = client.request(
        .add(AddRequest(service: rest[0], account: rest[1], protection: protection, data: value(rest[2]))))
    print("ok")
case "get":
    let reply = client.request(.copyMatching(ItemQuery(service: rest[0], account: rest[1], returnData: true)))
    guard case .items(let items) = reply, let data = items.first?.data else { fail("unexpected reply") }
    print(data.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
case "update":
    _ = client.request(
        .update(ItemQuery(service: rest[0], account: rest[1]), ItemChanges(data: value(rest[2]))))
    print("ok")
case "delete":
    _ = client.request(.delete(ItemQuery(service: rest[0], account: rest[1])))
    print("ok")
case "count":
    let reply = client.request(.copyMatching(ItemQuery(matchLimit: .all, returnAttributes: true)))
    guard case .items(let items) = reply else { fail("unexpected reply") }
    print(items.count)
case "add-many":
    for index in 0..<Int(rest[1])! {
        _ = client.request(.add(AddRequest(service: rest[0], account: "\(index)", data: value("v\(index)"))))
        print("acked \(index)")
        fflush(nil)
    }
case "stall":
    client.send(.copyMatching(ItemQuery(matchLimit: .all, returnAttributes: true)))
    while true { sleep(60) }
default:
    guard
        RelayModes.run(command, rest, &client) || AuditModes.run(command, rest, &client)
            || CancelModes.run(command, rest, &client) || AgentModes.run(command, rest, &client)
    else {
        fail("unknown command \(command)")
    }
}
