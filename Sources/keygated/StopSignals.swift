import Glibc
import KeygateServing

/// How the daemon stops: SIGTERM, SIGINT or SIGHUP end it within a moment, by one thread that
/// waits for them (`sigwait`), logs which one came, removes the socket the daemon made (never
/// one systemd passed, nor a file another daemon put at the path since) and ends the process
/// with status 0. Requests in flight end with it: a client sees its connection close, and what
/// was acknowledged is already durable (the trail and the store sync before each reply).
enum StopSignals {
    static let numbers = [SIGTERM, SIGINT, SIGHUP]

    /// The stop signals as a set.
    private static var signals: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for number in numbers { sigaddset(&set, number) }
        return set
    }

    /// Blocks the stop signals in the calling thread, and so in every thread started after it;
    /// a signal that comes before ``wait(removing:)`` waits pending. Call before any thread starts.
    static func block() {
        var set = signals
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Starts the thread that waits for a stop signal; `socket`: the socket file the daemon
    /// made (nil when systemd passed one), removed when it is still that file.
    /// - Returns: false when the thread could not be started.
    static func wait(removing socket: String?) -> Bool {
        var made = stat()
        let identity: (dev_t, ino_t)? = socket.flatMap { lstat($0, &made) == 0 ? (made.st_dev, made.st_ino) : nil }
        return Threads.detach {
            var set = signals
            var received: Int32 = 0
            while sigwait(&set, &received) != 0 {}
            var removed = ""
            if let socket, let identity {
                var now = stat()
                if lstat(socket, &now) == 0, now.st_dev == identity.0, now.st_ino == identity.1, unlink(socket) == 0 {
                    removed = "; removed \(socket)"
                }
            }
            Log.line("stopping on \(name(received))\(removed)")
            _exit(0)
        }
    }

    private static func name(_ number: Int32) -> String {
        switch number {
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        case SIGHUP: "SIGHUP"
        default: "signal \(number)"
        }
    }
}
