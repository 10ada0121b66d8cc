import Dispatch
import Synchronization

/// One connection's request thread: runs one request at a time, handed over by the
/// connection's reading thread, so that thread keeps reading (a `cancel`, a `promptAnswer`, a
/// disconnect) while a request waits on the facade or on a relayed prompt. Started at the
/// connection's first request; ends when the connection does.
final class RequestWorker: Sendable {
    private struct State: Sendable {
        var job: (@Sendable () -> Void)?
        var started = false
        var busy = false
        var stopping = false
        var stopperWaits = false
    }

    private let state = Mutex(State())
    private let ready = DispatchSemaphore(value: 0)
    private let idle = DispatchSemaphore(value: 0)

    /// Runs `job` on the worker thread (starting it at the first call); false when no thread
    /// could be made. One job at a time: the sequence check admits one request in flight.
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        let start = state.withLock { state -> Bool in
            state.job = job
            state.busy = true
            defer { state.started = true }
            return !state.started
        }
        if start && !Threads.detach({ [self] in loop() }) {
            state.withLock { $0 = State() }
            return false
        }
        ready.signal()
        return true
    }

    /// Waits until the job in flight (if any) has finished, then lets the thread end.
    func stop() {
        let (wait, started) = state.withLock { state in
            state.stopping = true
            state.stopperWaits = state.busy
            return (state.busy, state.started)
        }
        if wait { idle.wait() }
        if started { ready.signal() }
    }

    private func loop() {
        while true {
            ready.wait()
            let (job, stopping) = state.withLock { state in
                defer { state.job = nil }
                return (state.job, state.stopping)
            }
            if let job {
                job()
                let wake = state.withLock { state in
                    state.busy = false
                    return state.stopperWaits
                }
                if wake { idle.signal() }
            }
            if stopping || state.withLock({ $0.stopping && $0.job == nil && !$0.busy }) { return }
        }
    }
}
