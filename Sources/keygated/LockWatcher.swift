import Glibc
import KeygateLinux
import KeygatePolicy
import KeygateServing

/// Keeps the daemon's remembered proofs from outliving a screen lock or a logout between two
/// requests: once a second, for every (uid, session, terminal) that holds a proof, the
/// terminal's session leader must still be the process that started then (else the terminal's
/// login is over: the proofs go), and, when the device state comes from logind, the session
/// must not be locked (else every proof of that uid and session goes). A request also checks
/// the lock itself before any reuse (``DaemonAuthenticator``), so a lock is honoured at once
/// when the next request comes, and within about a second in any case.
enum LockWatcher {
    /// Starts the watcher thread; `device` gives the daemon's view of a uid's session.
    static func start(
        proofs: ProofCache, watchingLocks: Bool, device: @escaping @Sendable (UInt32, String) -> LinuxDevice
    ) {
        let started = Threads.detach {
            while true {
                sleep(1)
                sweep(proofs: proofs, watchingLocks: watchingLocks, device: device)
            }
        }
        if !started { Log.line("no thread to watch screen locks; proofs are checked at each request only") }
    }

    /// One pass (see the type).
    static func sweep(proofs: ProofCache, watchingLocks: Bool, device: (UInt32, String) -> LinuxDevice) {
        var checked: Set<String> = []
        for key in proofs.keys {
            if PeerIdentity.startTicks(key.terminal.sessionLeader) != key.terminal.leaderStarted {
                proofs.forget(key)
                continue
            }
            guard watchingLocks, checked.insert("\(key.uid) \(key.session)").inserted else { continue }
            if device(key.uid, key.session).snapshot(readingBiometry: false).device.isLocked {
                Log.line("uid \(key.uid): session \(key.session) is locked; its proofs are forgotten")
                proofs.clear(uid: key.uid, session: key.session)
            }
        }
    }
}
