/// Whether the store and the audit trail insist on private files (a library option; the
/// `keygate` command always insists).
///
/// With ``ownerOnly`` (the default), a database, its `-wal` and `-shm` files, the key file, a
/// trail or its head is refused unless it belongs to the effective user and is 0600 or
/// tighter, and its directory unless it belongs to the effective user and is not writable by
/// group or others: another user who can write there could read every item's metadata,
/// forge audit records, or plant a key. The message names the path and the fix.
///
/// Whatever the setting, each of these must be a regular file (never a FIFO, device or
/// symbolic link), so a hostile file cannot make Keygate hang, and a key file readable by
/// others is always refused.
public enum FilePrivacy: Hashable, Sendable {
    /// Refuse files and directories that are not the effective user's own and private.
    case ownerOnly
    /// Skip the owner and mode checks, for files shared on purpose (a group-owned store).
    case unchecked
}
