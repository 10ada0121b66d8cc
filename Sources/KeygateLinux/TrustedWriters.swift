package import Glibc

/// The one rule for a file whose contents Keygate acts on without asking (keygated's
/// configuration and policies, the enrollment file): it belongs to a trusted user and no one
/// else may write it. Anyone who could write such a file could change what it decides.
package enum TrustedWriters {
    /// True when the file `info` describes belongs to one of `owners` and its mode gives group
    /// and others no write permission. It says nothing about the file's type or path: the
    /// caller checks those (and fstat's the descriptor it reads, so the file checked is the file read).
    package static func only(_ owners: [uid_t], canWrite info: stat) -> Bool {
        owners.contains(info.st_uid) && info.st_mode & 0o022 == 0
    }
}
