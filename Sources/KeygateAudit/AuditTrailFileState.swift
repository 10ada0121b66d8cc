import Glibc

/// Which file a trail is and how far it was written: device, inode, length and change time,
/// to tell whether anyone wrote, replaced or removed it since it was last seen.
///
/// ``JSONLinesAuditSink/lastWritten`` is one taken with `fstat` of the open trail under the
/// sink's `flock`, right after its own write: unlike a look at the path after the append
/// returns, it can never include another writer's record slipped in between.
public struct AuditTrailFileState: Hashable, Sendable {
    /// The file system's device number.
    public var device: UInt64
    /// The inode number.
    public var inode: UInt64
    /// The length in bytes.
    public var size: Int64
    /// The change time (`st_ctim`): whole seconds since the epoch.
    public var changedSeconds: Int64
    /// The change time's nanoseconds within its second.
    public var changedNanoseconds: Int64

    /// The file at `path` as it is now (`lstat`: a symbolic link is not followed); nil when
    /// there is none.
    public init?(path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The file open as `descriptor` as it is now (`fstat`); nil when it cannot be read.
    init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    private init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        changedSeconds = Int64(info.st_ctim.tv_sec)
        changedNanoseconds = Int64(info.st_ctim.tv_nsec)
    }
}
