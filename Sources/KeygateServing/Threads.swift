import Glibc

/// Starts `body` on a detached POSIX thread of its own (connection threads, the lock watcher).
public enum Threads {
    private final class Job: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// - Returns: false when no thread could be made (the caller refuses the connection).
    public static func detach(_ body: @escaping @Sendable () -> Void) -> Bool {
        let context = Unmanaged.passRetained(Job(body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { raw in
                Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue().body()
                return nil
            }, context)
        guard created == 0 else {
            Unmanaged<Job>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}
