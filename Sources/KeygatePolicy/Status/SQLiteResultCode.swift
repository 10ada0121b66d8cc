/// An SQLite result code, primary or extended, as a ``KeygateError`` keeps it (its ``KeygateError/cause``).
///
/// The constants are SQLite's numbers (this module does not link SQLite). A primary code
/// pattern-matches every extended code built on it, as in GRDB's `ResultCode`:
/// `case .busy = code` is true for `SQLITE_BUSY_SNAPSHOT` too, and
/// `catch SQLiteResultCode.constraint` catches a unique-index violation.
public struct SQLiteResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as SQLite returned it (extended when extended codes are on, as in Keygate).
    public let rawValue: Int32

    /// Wraps a code.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary result code (the low eight bits).
    public var primary: SQLiteResultCode { SQLiteResultCode(rawValue: rawValue & 0xff) }

    /// `SQLITE_ERROR`: a generic error.
    public static let error = SQLiteResultCode(rawValue: 1)
    /// `SQLITE_INTERNAL`.
    public static let `internal` = SQLiteResultCode(rawValue: 2)
    /// `SQLITE_PERM`: access permission denied.
    public static let permission = SQLiteResultCode(rawValue: 3)
    /// `SQLITE_ABORT`.
    public static let abort = SQLiteResultCode(rawValue: 4)
    /// `SQLITE_BUSY`: another connection holds a lock (beyond the busy timeout).
    public static let busy = SQLiteResultCode(rawValue: 5)
    /// `SQLITE_LOCKED`: a conflict within this connection.
    public static let locked = SQLiteResultCode(rawValue: 6)
    /// `SQLITE_NOMEM`.
    public static let noMemory = SQLiteResultCode(rawValue: 7)
    /// `SQLITE_READONLY`: an attempt to write a read-only database.
    public static let readOnly = SQLiteResultCode(rawValue: 8)
    /// `SQLITE_INTERRUPT`.
    public static let interrupt = SQLiteResultCode(rawValue: 9)
    /// `SQLITE_IOERR`: a disk I/O error.
    public static let ioError = SQLiteResultCode(rawValue: 10)
    /// `SQLITE_CORRUPT`: the database image is malformed.
    public static let corrupt = SQLiteResultCode(rawValue: 11)
    /// `SQLITE_FULL`: the disk is full.
    public static let full = SQLiteResultCode(rawValue: 13)
    /// `SQLITE_CANTOPEN`: the file cannot be opened.
    public static let cannotOpen = SQLiteResultCode(rawValue: 14)
    /// `SQLITE_CONSTRAINT`: a constraint (such as the primary-key index) was violated.
    public static let constraint = SQLiteResultCode(rawValue: 19)
    /// `SQLITE_MISMATCH`: a data type mismatch.
    public static let mismatch = SQLiteResultCode(rawValue: 20)
    /// `SQLITE_NOTADB`: the file is not a database.
    public static let notADatabase = SQLiteResultCode(rawValue: 26)
    /// `SQLITE_BUSY_SNAPSHOT`: a WAL read snapshot went stale before a write.
    public static let busySnapshot = SQLiteResultCode(rawValue: 5 | 2 << 8)
    /// `SQLITE_CONSTRAINT_UNIQUE`: a unique index was violated.
    public static let constraintUnique = SQLiteResultCode(rawValue: 19 | 8 << 8)

    private static let names: [Int32: String] = [
        1: "SQLITE_ERROR", 2: "SQLITE_INTERNAL", 3: "SQLITE_PERM", 4: "SQLITE_ABORT", 5: "SQLITE_BUSY",
        6: "SQLITE_LOCKED", 7: "SQLITE_NOMEM", 8: "SQLITE_READONLY", 9: "SQLITE_INTERRUPT", 10: "SQLITE_IOERR",
        11: "SQLITE_CORRUPT", 12: "SQLITE_NOTFOUND", 13: "SQLITE_FULL", 14: "SQLITE_CANTOPEN", 15: "SQLITE_PROTOCOL",
        16: "SQLITE_EMPTY", 17: "SQLITE_SCHEMA", 18: "SQLITE_TOOBIG", 19: "SQLITE_CONSTRAINT", 20: "SQLITE_MISMATCH",
        21: "SQLITE_MISUSE", 22: "SQLITE_NOLFS", 23: "SQLITE_AUTH", 24: "SQLITE_FORMAT", 25: "SQLITE_RANGE",
        26: "SQLITE_NOTADB",
    ]

    /// `5 (SQLITE_BUSY)`, or for an extended code `517 (SQLITE_BUSY, extended)`.
    public var description: String {
        let name = Self.names[rawValue & 0xff] ?? "unknown"
        return rawValue > 0xff ? "\(rawValue) (\(name), extended)" : "\(rawValue) (\(name))"
    }

    /// True when `code` is `pattern`, or `pattern` is a primary code and `code` extends it.
    public static func ~= (pattern: SQLiteResultCode, code: SQLiteResultCode) -> Bool {
        pattern.rawValue > 0xff ? pattern == code : pattern == code.primary
    }

    /// Matches an error whose cause is an SQLite code that `pattern` matches:
    /// `catch SQLiteResultCode.busy`.
    public static func ~= (pattern: SQLiteResultCode, error: any Error) -> Bool {
        guard let code = (error as? KeygateError)?.sqliteCode else { return false }
        return pattern ~= code
    }

    /// Matches a ``KeygateError`` whose cause is an SQLite code that `pattern` matches (typed throws).
    public static func ~= (pattern: SQLiteResultCode, error: KeygateError) -> Bool {
        guard let code = error.sqliteCode else { return false }
        return pattern ~= code
    }
}
