import KeygatePolicy

/// Which optional conditions an ``ItemFilter`` sets, one bit each: the key of its cached
/// statement. The SQL text is built only when a shape is first seen; binding walks the same
/// conditions in the same order.
struct SearchShape {
    let conditions: UInt8

    private static let service: UInt8 = 1 << 0
    private static let account: UInt8 = 1 << 1
    private static let label: UInt8 = 1 << 2
    private static let generic: UInt8 = 1 << 3
    private static let synchronizable: UInt8 = 1 << 4
    private static let protection: UInt8 = 1 << 5
    /// How many condition bits there are.
    /// Not a condition: the value columns are left out (``ItemFilter/withoutValues``).
    private static let withoutValues: UInt8 = 1 << 6
    static let bitCount = 7

    init(_ filter: ItemFilter) {
        var bits: UInt8 = 0
        if filter.service != nil { bits |= Self.service }
        if filter.account != nil { bits |= Self.account }
        if filter.label != nil { bits |= Self.label }
        if filter.generic != nil { bits |= Self.generic }
        if filter.synchronizable != nil { bits |= Self.synchronizable }
        if filter.protection != nil { bits |= Self.protection }
        if filter.withoutValues { bits |= Self.withoutValues }
        conditions = bits
    }

    /// The names this shape fixes to one value: the access group when there is one, the service
    /// and account when given. The query selects them only where they are not fixed.
    func fixedNames(_ filter: ItemFilter) -> FixedNames {
        FixedNames(
            group: filter.accessGroups.count == 1 ? filter.accessGroups[0] : nil,
            account: conditions & Self.account != 0 ? filter.account : nil,
            service: conditions & Self.service != 0 ? filter.service : nil)
    }

    /// `SELECT … WHERE agrp IN (?, …) AND svce = ? … ORDER BY id` for this shape, selecting
    /// ``SQLiteItemStore/columns`` without the names it fixes (the parameters stay in the order
    /// of ``bind(_:to:)`` in both forms).
    func sql(_ filter: ItemFilter) -> String {
        // Appended piece by piece: the standard library's `joined(separator:)` on `[String]` is
        // not specialised, and its run-time lookup of `[String]: BidirectionalCollection` scans
        // all the executable's conformances, in every process that reads.
        let fixed = fixedNames(filter)
        var selected = "id"
        if fixed.group == nil { selected += ", agrp" }
        if fixed.account == nil { selected += ", acct" }
        if fixed.service == nil { selected += ", svce" }
        selected += ", sync, labl, gena, pdmn, accc, cdat, mdat"
        if readsValues { selected += ", nonce, value" }
        var condition = "agrp IN ("
        for index in filter.accessGroups.indices { condition += index == 0 ? "?" : ", ?" }
        condition += ")"
        for (bit, clause) in [
            (Self.service, "svce = ?"), (Self.account, "acct = ?"), (Self.label, "labl = ?"),
            (Self.generic, "gena = ?"), (Self.synchronizable, "sync = ?"), (Self.protection, "pdmn = ?"),
        ] where conditions & bit != 0 {
            condition += " AND " + clause
        }
        // With the account and service fixed, the primary-key index finds at most two rows per
        // access group: they come unordered (an ORDER BY would make SQLite copy them, values and
        // all, into a sorter on every read) and the store orders them by id. Any wider search (a
        // list) collects the matching ids from the index first and reads the rows in id order
        // from them, so SQLite never sorts whole rows (a 200k-item list would spill them to a
        // temporary file).
        guard isOrdered else { return "SELECT \(selected) FROM items WHERE \(condition)" }
        return "SELECT \(selected) FROM items WHERE id IN (SELECT id FROM items WHERE \(condition)) ORDER BY id"
    }

    /// Whether the rows include the sealed value (`nonce`, `value`).
    var readsValues: Bool { conditions & Self.withoutValues == 0 }

    /// Whether ``sql(_:)`` returns the rows in id order; otherwise (a point read: service and
    /// account given) the caller orders its few rows.
    var isOrdered: Bool { conditions & Self.account == 0 || conditions & Self.service == 0 }

    /// Binds the filter's values in the order of ``sql(_:)``.
    func bind(_ filter: ItemFilter, to statement: SQLiteStatement) throws(KeygateError) {
        var index: Int32 = 1
        func next(_ value: SQLiteStatement.Value) throws(KeygateError) {
            try statement.bind(value, at: index)
            index += 1
        }
        for group in filter.accessGroups { try next(.text(group)) }
        if let service = filter.service { try next(.text(service)) }
        if let account = filter.account { try next(.text(account)) }
        if let label = filter.label { try next(.text(label)) }
        if let generic = filter.generic { try next(.blob(generic)) }
        if let sync = filter.synchronizable { try next(.integer(sync ? 1 : 0)) }
        if let protection = filter.protection { try next(.text(protection.rawValue)) }
    }
}

/// The name columns a search fixes, taken from the filter instead of read back from each row:
/// SQLite compares text byte for byte, so a matching row holds exactly these bytes.
struct FixedNames {
    var group: String?
    var account: String?
    var service: String?
}
