import Glibc
import KeygateAudit
import KeygatePolicy

// keygate-trail-writer PATH N: a group-commit writer (a flush every N records) for
// KeygateAuditTests, driven one command a line on standard input, answering one line each:
//   append   appends a record, then prints "acked SEQUENCE" (the append has returned)
//   flush    flushes, then prints "flushed"
// It never exits by itself: the tests end it with SIGKILL, as a crash would.

let arguments = CommandLine.arguments
guard arguments.count == 3, let every = Int(arguments[2]) else {
    print("usage: keygate-trail-writer PATH N")
    exit(2)
}
let sink = JSONLinesAuditSink(path: arguments[1], durability: .groupCommit(records: every))
/// Writes `text` and a newline to standard output at once (unbuffered: the test waits for it).
func answer(_ text: String) {
    let bytes = Array((text + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { exit(1) }
        offset += written
    }
}

while let command = readLine() {
    switch command {
    case "append":
        let event = AuditEvent(
            kind: .read, item: .init(accessGroup: "g", account: "pid\(getpid())", service: "api"), decision: .allow)
        do {
            answer("acked \(try sink.append(event, at: Timestamp(seconds: 1)).sequence)")
        } catch {
            answer("error \(error)")
        }
    case "flush":
        sink.flush()
        answer("flushed")
    default:
        answer("unknown \(command)")
    }
}
while true { pause() }
