import Dispatch

/// Runs async facade calls from a connection's own thread and waits for them there, so a
/// slow call blocks that connection only, never the accept loop or the concurrency pool's
/// other work.
enum Blocking {
    private final class Box<T>: @unchecked Sendable {
        var value: T?
    }

    static func run<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let box = Box<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            box.value = await body()
            done.signal()
        }
        done.wait()
        return box.value!
    }
}
