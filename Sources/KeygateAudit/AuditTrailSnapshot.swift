import Glibc
public import KeygateItems
public import KeygatePolicy

/// A trail as it stood at one moment: open for reading, its length then, its head, and what
/// the item store kept of it (anchor, held records), all taken together by ``take(at:anchors:privacy:)``.
/// A reader that takes it while no record is half-written (under a writer's lock) can then read
/// and verify the trail without holding that lock: the trail is append-only, so its first
/// ``size`` bytes do not change but by a crash recovery, which the verdict then shows.
///
/// Closes its descriptor when released.
public final class AuditTrailSnapshot: Sendable {
    /// The trail, open for reading.
    let descriptor: Int32
    /// The trail's path (for messages).
    public let path: String
    /// The trail's length when taken.
    public let size: Int64
    /// The head file as read then.
    let head: AuditHeadFile.Contents
    /// The store's anchor of the trail, nil when none is kept.
    let anchor: AuditHead?
    /// The records the store holds past the trail's release.
    let held: [HeldAuditRecord]

    private init(
        descriptor: Int32, path: String, size: Int64, head: AuditHeadFile.Contents, anchor: AuditHead?,
        held: [HeldAuditRecord]
    ) {
        self.descriptor = descriptor
        self.path = path
        self.size = size
        self.head = head
        self.anchor = anchor
        self.held = held
    }

    deinit { close(descriptor) }

    /// The trail at `path` as it is now, with its head and what `anchors` keeps of it; nil when
    /// there is no trail yet.
    /// - Throws: `errSecIO` when a file cannot be read, is not a regular file, or (with
    ///   ``KeygateItems/FilePrivacy/ownerOnly``) is not the effective user's own and private; the store's
    ///   error when it cannot be read.
    public static func take(
        at path: String, anchors: (any MetadataStore)? = nil, privacy: FilePrivacy = .ownerOnly
    ) throws(KeygateError) -> AuditTrailSnapshot? {
        try PrivateFile.checkDirectory(of: path, privacy: privacy, status: .io)
        guard let descriptor = try PrivateFile.open(path, flags: O_RDONLY, privacy: privacy, status: .io) else {
            return nil
        }
        do throws(KeygateError) {
            let size = lseek(descriptor, 0, SEEK_END)
            guard size >= 0 else { throw KeygateError(.io, "cannot read \(path): \(String(cString: strerror(errno)))") }
            let head = try AuditHeadFile.read(path + ".head", privacy: privacy)
            let kept = try anchors.map { (store) throws(KeygateError) in
                try AuditAnchorKeeper(store: store, trail: path).anchorAndHeldRecords()
            }
            return AuditTrailSnapshot(
                descriptor: descriptor, path: path, size: Int64(size), head: head, anchor: kept?.anchor,
                held: kept?.held ?? [])
        } catch {
            close(descriptor)
            throw error
        }
    }

    /// Verifies the snapshot's bytes against its head and anchor, as
    /// ``AuditTrailFile/verify(at:anchors:privacy:)`` verifies the whole file.
    /// - Throws: `errSecIO` when the trail cannot be read.
    public func verify() throws(KeygateError) -> AuditVerification {
        let found: AuditHead?
        switch head {
        case .missing:
            if size > 0 { return .broken(sequence: 1, reason: "the head file \(path).head is missing") }
            found = nil
        case .damaged(let problem): return .broken(sequence: 1, reason: "the head file is damaged: \(problem)")
        case .found(let head): found = head
        }
        return try AuditTrailFile.verify(
            descriptor: descriptor, path: path, head: found, anchor: anchor, held: held, limit: off_t(size)
        ).verdict
    }

    /// Calls `body` with each complete, non-empty line of the snapshot, newest first, until it
    /// returns false; bytes after the last newline (a partial record) are skipped.
    /// - Throws: `errSecAllocate` for a line longer than `longestLine`; `errSecIO` when the
    ///   trail cannot be read, or is shorter than the snapshot.
    public func linesNewestFirst(longestLine: Int, _ body: ([UInt8]) -> Bool) throws(KeygateError) {
        let chunkSize = 1 << 16
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        // The end of the line being read (its bytes after this chunk), and whether a newline
        // was seen yet: before the first, the bytes are a partial record and are dropped.
        var pending: [UInt8] = []
        var terminated = false
        var position = off_t(size)
        while position > 0 {
            let start = max(0, position - off_t(chunkSize))
            let wanted = Int(position - start)
            let got = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, wanted, start) }
            guard got == wanted else { throw KeygateError(.io, "\(path) changed while it was read") }
            var end = got
            var index = got - 1
            while index >= 0 {
                if chunk[index] == 10 {
                    if terminated {
                        let line = Array(chunk[(index + 1)..<end]) + pending
                        if !line.isEmpty, !body(line) { return }
                    }
                    terminated = true
                    pending.removeAll(keepingCapacity: true)
                    end = index
                }
                index -= 1
            }
            pending = Array(chunk[0..<end]) + pending
            guard pending.count <= longestLine else {
                throw KeygateError(.allocate, "a line of \(path) is longer than \(longestLine) bytes")
            }
            position = start
        }
        if terminated, !pending.isEmpty { _ = body(pending) }
    }
}
