import Dispatch
import Glibc
import Synchronization

// The group-commit sinks' idle release: one thread of its own, sleeping until the
// earliest sink comes due, instead of a libdispatch timer per idle period (whose every firing
// woke the manager thread, reprogrammed its timerfd, and woke a queue worker to run the check).

/// Gives a group-commit sink's trail lock up once the sink has been idle for its idle release
/// (``JSONLinesAuditSink/scheduleRelease(_:)``), from one thread shared by every sink.
///
/// A sink is scheduled once (not once per append) with the count of its lock-keeping appends
/// (``JSONLinesAuditSink/Shared/appends``). When it comes due and that count moved, the sink is
/// still busy: it is due again one idle period later, without touching its state's lock. Only
/// when the count stayed put for a whole idle period is the sink's lock given up
/// (``JSONLinesAuditSink/releaseIfIdle(_:seen:)``). A busy sink is so looked at about once per
/// idle period (one wake-up of this thread), and an idle one is released at most two idle
/// periods after its last append.
final class IdleReleaser: @unchecked Sendable {
    /// The releaser every sink uses.
    static let shared = IdleReleaser()

    /// A scheduled sink: the appends it had made when last looked at, and when it is due.
    private struct Entry {
        let shared: JSONLinesAuditSink.Shared
        var seen: UInt64
        var due: UInt64
        let interval: UInt64
    }

    // Everything below is guarded by `mutex` (the thread waits on `condition`).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var entries: [Entry] = []
    private var started = false
    /// When the thread wakes next on its own (`UInt64.max`: not before a sink is scheduled).
    private var waitingUntil = UInt64.max

    /// A releaser with a thread of its own, started at its first schedule (tests make one
    /// apart from ``shared``, so no other sink's schedule wakes it). The thread, once started,
    /// keeps the releaser for the life of the process.
    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    /// Looks at `shared` one idle period from now: released then unless it made appends
    /// other than the `appends` it has made so far.
    func schedule(_ shared: JSONLinesAuditSink.Shared, appends: UInt64) {
        let interval = Self.nanoseconds(shared.idleRelease)
        let due = Self.now() &+ interval
        pthread_mutex_lock(mutex)
        entries.append(Entry(shared: shared, seen: appends, due: due, interval: interval))
        if !started {
            started = true
            startThread()
        } else if due < waitingUntil {
            pthread_cond_signal(condition)
        }
        pthread_mutex_unlock(mutex)
    }

    /// The thread's loop: sleeps until the earliest entry is due, then looks at every entry due.
    private func run() -> Never {
        pthread_mutex_lock(mutex)
        while true {
            let now = Self.now()
            var idle: [Entry] = []
            var earliest = UInt64.max
            var index = 0
            while index < entries.count {
                if entries[index].due <= now {
                    let made = entries[index].shared.appends.load(ordering: .relaxed)
                    if made != entries[index].seen {
                        // Still busy: look again one idle period later, no lock taken.
                        entries[index].seen = made
                        entries[index].due = now &+ entries[index].interval
                    } else {
                        idle.append(entries.remove(at: index))
                        continue
                    }
                }
                earliest = min(earliest, entries[index].due)
                index += 1
            }
            if !idle.isEmpty {
                // The sinks' own locks are taken without this one (an append holds its sink's
                // lock while it schedules here).
                pthread_mutex_unlock(mutex)
                var busy: [Entry] = []
                for var entry in idle where !JSONLinesAuditSink.releaseIfIdle(entry.shared, seen: entry.seen) {
                    entry.seen = entry.shared.appends.load(ordering: .relaxed)
                    entry.due = Self.now() &+ entry.interval
                    busy.append(entry)
                }
                pthread_mutex_lock(mutex)
                entries += busy
                continue
            }
            waitingUntil = earliest
            if earliest == .max {
                pthread_cond_wait(condition, mutex)
            } else {
                var deadline = timespec(tv_sec: Int(earliest / 1_000_000_000), tv_nsec: Int(earliest % 1_000_000_000))
                pthread_cond_timedwait(condition, mutex, &deadline)
            }
            waitingUntil = .max
        }
    }

    /// Starts the thread (detached; it lives as long as the process, and keeps this releaser).
    private func startThread() {
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { context in Unmanaged<IdleReleaser>.fromOpaque(context!).takeUnretainedValue().run() },
            Unmanaged.passRetained(self).toOpaque())
        precondition(created == 0, "cannot start the audit trail's idle-release thread")
        pthread_detach(thread)
    }

    /// The monotonic clock, in nanoseconds.
    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// `interval` in nanoseconds (`never`: as good as never).
    private static func nanoseconds(_ interval: DispatchTimeInterval) -> UInt64 {
        switch interval {
        case .seconds(let count): UInt64(max(count, 0)) &* 1_000_000_000
        case .milliseconds(let count): UInt64(max(count, 0)) &* 1_000_000
        case .microseconds(let count): UInt64(max(count, 0)) &* 1_000
        case .nanoseconds(let count): UInt64(max(count, 0))
        default: UInt64.max / 2
        }
    }
}
