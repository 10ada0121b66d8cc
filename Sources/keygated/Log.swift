import Glibc

/// Writes one line to standard error (the daemon's log; journald adds time and unit). Never
/// given a secret: callers pass statuses, uids, pids and paths only.
enum Log {
    static func line(_ text: String) {
        var bytes = Array(("keygated: " + text + "\n").utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
