import Dispatch
import Glibc
import KeygateItems
import KeygatePolicy
import Synchronization

// The trail file's lock: each append takes an exclusive `flock`; under group commit a sink keeps
// it between flushes and gives it up once idle; the trail is reopened when its path names
// another file.

extension JSONLinesAuditSink {
    /// How long a group-commit sink keeps the trail's lock after its last append when no flush
    /// comes first: 1 ms (tests may set another).
    static let idleRelease = DispatchTimeInterval.milliseconds(1)

    /// Releases the trail's lock when this sink holds it.
    static func unlock(_ state: inout State) {
        if state.locked, state.trail >= 0 { flock(state.trail, LOCK_UN) }
        state.locked = false
    }

    /// Makes sure the lock kept between appends is released once the sink has been idle for
    /// its idle release (``idleRelease`` unless a test set another), by its ``IdleReleaser``'s
    /// thread, never the flusher, which an append may wait for while it holds the state.
    ///
    /// One release is scheduled at a time, not one per append: when it comes due and appends
    /// were made since it was scheduled (``Shared/appends``, read without the state's lock), it
    /// is due again one idle period later, and the lock is taken only when none was.
    func scheduleRelease(_ state: inout State) {
        guard !state.releaseScheduled else { return }
        state.releaseScheduled = true
        shared.releaser.schedule(shared, appends: shared.appends.load(ordering: .relaxed))
    }

    /// Gives the trail's lock up unless an append came since the releaser saw `seen` appends.
    /// - Returns: whether the release is done (false: the sink is busy, look again later).
    static func releaseIfIdle(_ shared: Shared, seen: UInt64) -> Bool {
        shared.state.withLock { state in
            if state.locked, shared.appends.load(ordering: .relaxed) != seen { return false }
            unlock(&state)
            state.releaseScheduled = false
            return true
        }
    }

    /// Opens the trail when needed and locks it (`flock`), reopening it when the path now
    /// names another file (removed, replaced).
    /// - Returns: the trail's length, as found under the lock.
    func lockedTrail(_ state: inout State) throws(KeygateError) -> off_t {
        for _ in 0..<3 {
            if state.trail < 0 {
                try PrivateFile.checkDirectory(of: path, privacy: privacy, status: .io)
                guard
                    let descriptor = try PrivateFile.open(
                        path, flags: O_RDWR | O_APPEND | O_CREAT, privacy: privacy, status: .io)
                else { throw failure("cannot open \(path)") }
                var info = stat()
                fstat(descriptor, &info)
                state.trail = descriptor
                state.trailFile = FileID(info)
                state.size = -1
            }
            if state.locked, state.size >= 0, state.headFile >= 0 {
                // Locked since this sink's last append left the trail `size` bytes long.
                return state.size
            }
            guard flock(state.trail, LOCK_EX) == 0 else { throw failure("cannot lock \(path)") }
            state.locked = true
            if case .groupCommit = durability, state.pending > 0, state.size >= 0, state.headFile >= 0 {
                // Group commit, between flushes: only the trail's length (did another process
                // append?), from the open file by `lseek`; the paths, owners and modes are checked
                // in full on the first append after each flush. Not `fstat`: a file whose times
                // were looked at gets a fine-grained time stamp on its next write (the kernel's
                // multigrain time stamps), which makes every append rewrite the inode.
                let end = lseek(state.trail, 0, SEEK_END)
                if end >= 0 { return end }
            }
            // One lstat of each file: the same files, still private, and the trail's length.
            var info = stat()
            if lstat(path, &info) == 0, FileID(info) == state.trailFile {
                do throws(KeygateError) {
                    try PrivateFile.check(info, path: path, privacy: privacy, status: .io)
                    if state.headFile >= 0 {
                        var headInfo = stat()
                        if lstat(headPath, &headInfo) != 0 || FileID(headInfo) != state.headFileID {
                            state.size = -1  // replaced or removed: read it again
                        } else {
                            try PrivateFile.check(headInfo, path: headPath, privacy: privacy, status: .io)
                        }
                    }
                } catch {
                    Self.unlock(&state)
                    throw error
                }
                return info.st_size
            }
            Self.unlock(&state)
            state.close()
        }
        throw KeygateError(.io, "\(path) keeps being replaced; run 'keygate audit verify'")
    }
}
