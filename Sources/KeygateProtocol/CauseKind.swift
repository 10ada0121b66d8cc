/// The kind byte of an error frame's cause (`KeygateError.Cause`) on the wire; its fields follow.
/// A condition travels by its name, so one this side does not know still arrives as itself.
enum CauseKind: UInt8 {
    /// An SQLite extended result code: i32.
    case sqlite = 1
    /// A PAM status: i32.
    case pam = 2
    /// An `errno`: i32.
    case errno = 3
    /// A libsodium failure: string function, i32 result.
    case sodium = 4
    /// A named condition: string name.
    case condition = 5
    /// A libcrypto failure: string function, i64 packed error code.
    case libcrypto = 6
}
