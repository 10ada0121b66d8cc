extension KeygateError {
    /// A failure Keygate detects itself, named so callers can tell apart failures that share a
    /// status (most of them are `errSecNotAvailable`, as Apple reports an unusable keychain).
    ///
    /// Open, like ``KeygateStatus``: a future condition is a new constant, not a breaking change.
    /// Match one with a `catch` pattern (`catch KeygateError.Condition.racingWriter`) or compare
    /// ``KeygateError/condition``.
    public struct Condition: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The condition's stable name, such as `racingWriter`.
        public let rawValue: String

        /// Wraps a name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Another writer changed the item between this caller's read and its write; nothing was
        /// changed (read again and retry).
        public static let racingWriter = Condition(rawValue: "racingWriter")
        /// The database's schema is newer than this Keygate knows; it was not changed.
        public static let newerSchema = Condition(rawValue: "newerSchema")
        /// The database is not a Keygate store (another program's tables, or a schema version
        /// this Keygate did not make); it was not changed.
        public static let foreignDatabase = Condition(rawValue: "foreignDatabase")
        /// A file or directory can be read or written by other users (its mode); it was not used.
        public static let notPrivate = Condition(rawValue: "notPrivate")
        /// A file or directory belongs to another user; it was not used.
        public static let wrongOwner = Condition(rawValue: "wrongOwner")
        /// A path is a symbolic link, FIFO, device, socket or directory where a regular file must
        /// be; it was not used.
        public static let notRegularFile = Condition(rawValue: "notRegularFile")
        /// Neither `XDG_DATA_HOME` nor `HOME` names an absolute directory, so there is no
        /// default place for the store.
        public static let noHome = Condition(rawValue: "noHome")
        /// The key file is missing while the store holds items or its key-check value sealed under
        /// it (from the store's first open on).
        public static let missingKey = Condition(rawValue: "missingKey")
        /// The key file is not a Keygate key (wrong length), or another process never finished
        /// writing it.
        public static let malformedKey = Condition(rawValue: "malformedKey")
        /// The key is not the store's own: its key-check value, or every item, fails to open under it.
        public static let wrongKey = Condition(rawValue: "wrongKey")
        /// The database is missing or empty while its key file exists: the store held items and
        /// its database was lost.
        public static let lostDatabase = Condition(rawValue: "lostDatabase")
        /// A stored item's access-control columns do not parse or disagree; it can only be deleted.
        public static let damagedItem = Condition(rawValue: "damagedItem")
        /// A record did not come from this store, so it holds no value this store can open.
        public static let foreignRecord = Condition(rawValue: "foreignRecord")
        /// The effective uid has no passwd entry, so there is no account to prove presence for.
        public static let noAccount = Condition(rawValue: "noAccount")
        /// A shared library (such as `libpam_wrapper.so`) could not be loaded or lacks a symbol.
        public static let libraryNotLoaded = Condition(rawValue: "libraryNotLoaded")
        /// A prompt relayed to the client got no answer within the daemon's `prompt-timeout`.
        public static let promptTimedOut = Condition(rawValue: "promptTimedOut")
        /// A prompt could not be relayed: too many were waiting (`max-prompts`, `max-prompts-per-user`).
        public static let promptLimit = Condition(rawValue: "promptLimit")
        /// A proof was needed by a requester that cannot be asked itself, and no authentication
        /// agent is registered for its session.
        public static let noAgent = Condition(rawValue: "noAgent")

        /// The name.
        public var description: String { rawValue }

        /// Matches an error whose cause is this condition: `catch KeygateError.Condition.racingWriter`.
        public static func ~= (condition: Condition, error: any Error) -> Bool {
            (error as? KeygateError)?.condition == condition
        }

        /// Matches a ``KeygateError`` whose cause is this condition (for typed throws).
        public static func ~= (condition: Condition, error: KeygateError) -> Bool {
            error.condition == condition
        }
    }
}
