import Dispatch
import Glibc
import KeygateItems

@testable import KeygateAudit

/// What the group-commit suites share: a sink that keeps the trail's lock for a chosen idle
/// time, and a look at whether another open file description could take that lock now.
enum GroupCommitTestSinks {
    /// A sink as the public initializer makes one, but keeping the lock for `idle`.
    static func sink(
        _ path: String, records: Int, idle: DispatchTimeInterval, releaser: IdleReleaser = .shared
    ) -> JSONLinesAuditSink {
        JSONLinesAuditSink(
            path: path, durability: .groupCommit(records: records), anchors: nil, privacy: .ownerOnly,
            anchorInterval: JSONLinesAuditSink.defaultAnchorInterval, idleRelease: idle, releaser: releaser)
    }

    /// Whether another open file description of `path` can take the lock now.
    static func lockIsFree(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return false }
        flock(descriptor, LOCK_UN)
        return true
    }
}
