import Glibc

/// Runs blocking work on a new POSIX thread of its own, never on the Swift concurrency
/// pool: PAM modules block on devices and sleep.
///
/// A thread is made for each job and ends with it, never kept for the next one: what a module
/// leaves on its thread (a file-system uid from `pam_modutil_drop_priv` not regained after an
/// error, a blocked signal, its thread-local state) must not reach the next proof, which in
/// `keygated` may be another user's. The cost of the fresh thread is what the bench's "PAM proof
/// under pam_wrapper" rows show beside the same transaction in C.
enum DedicatedThread {
    private final class Job: @unchecked Sendable {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Runs `body` on a dedicated thread and resumes with its result.
    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let job = Job { continuation.resume(returning: body()) }
            let context = Unmanaged.passRetained(job).toOpaque()
            var thread = pthread_t()
            let created = pthread_create(
                &thread, nil,
                { raw in
                    let job = Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue()
                    job.body()
                    return nil
                }, context)
            if created == 0 {
                pthread_detach(thread)
            } else {
                // No thread could be made: run here rather than never (still off the caller's task).
                Unmanaged<Job>.fromOpaque(context).takeRetainedValue().body()
            }
        }
    }
}
