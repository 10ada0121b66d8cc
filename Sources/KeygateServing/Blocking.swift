import Dispatch
import Synchronization

/// Runs async facade calls on the calling thread (a connection's own thread) and waits for
/// them there, so a slow call blocks that connection only, never the accept loop or the
/// concurrency pool's other work.
///
/// The call's task prefers a `CallerExecutor` that the calling thread drains itself: a call
/// that never suspends (a plain read) runs start to end on this thread, with no hand-off to
/// the concurrency pool and back (two thread wake-ups per request before). A call that does
/// suspend (a PAM transaction on its own thread) is resumed here too, when its continuation
/// enqueues the next part.
public enum Blocking {
    private final class Box<T>: @unchecked Sendable {
        var value: T?
    }

    /// Runs `body` and waits for its result on this thread.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let box = Box<T>()
        let executor = CallerExecutor()
        Task(executorPreference: executor) {
            box.value = await body()
            executor.finish()
        }
        executor.drain()
        return box.value!
    }
}

/// A task executor whose jobs run on the one thread that calls ``drain()``, until
/// ``finish()``. Enqueueing from that thread costs no wake-up (the semaphore is only counted);
/// a job enqueued from another thread (a resumed continuation) wakes it.
final class CallerExecutor: TaskExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var finished = false
    }

    private let state = Mutex(State())
    private let pending = DispatchSemaphore(value: 0)

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        state.withLock { $0.jobs.append(unowned) }
        pending.signal()
    }

    /// Marks the work done (called by the last job); ``drain()`` returns after that job.
    func finish() {
        state.withLock { $0.finished = true }
        pending.signal()
    }

    /// Runs the enqueued jobs on this thread, in order, until ``finish()`` was called.
    func drain() {
        while true {
            pending.wait()
            let (job, finished) = state.withLock { state -> (UnownedJob?, Bool) in
                if state.jobs.isEmpty { return (nil, state.finished) }
                return (state.jobs.removeFirst(), false)
            }
            if let job {
                job.runSynchronously(on: asUnownedTaskExecutor())
            } else if finished {
                return
            }
        }
    }
}
