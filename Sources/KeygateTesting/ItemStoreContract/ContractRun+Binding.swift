import KeygatePolicy
import KeygateStore

extension ContractRun {
    /// Bound values: a value moved to another item, read with an access control changed behind
    /// the store's back, or a record the store never made, fails with `errSecDecode` from both
    /// `open` and `verify`.
    func checkBoundValues(_ store: any ItemStore) {
        guard
            attempt(
                .boundValues, "adding two items",
                { () throws(KeygateError) in
                    try store.insert([ContractItems.item("a", "a"), ContractItems.item("b", "b")])
                }) != nil,
            let read = attempt(
                .boundValues, "a search",
                { () throws(KeygateError) in
                    try store.items(matching: ContractItems.everything)
                }), read.count == 2
        else { return }
        records += read
        let downgraded = try! AccessControl(protection: .always)
        var edited = read[0].fields
        edited.accessControl = downgraded
        let forgeries = [
            (ItemRecord(id: read[1].id, fields: read[1].fields, sealed: read[0].sealed), "a's value moved to item b"),
            (ItemRecord(id: read[0].id, fields: edited, sealed: read[0].sealed), "a's access control changed"),
            (
                ItemRecord(id: read[0].id, fields: read[0].fields, sealed: [0xDE, 0xAD]),
                "a record the store never made"
            ),
        ]
        for (record, what) in forgeries {
            expectFailure(.boundValues, .decode, "opening \(what)") { () throws(KeygateError) in
                _ = try store.open(record)
            }
            expectFailure(.boundValues, .decode, "verifying \(what)") { () throws(KeygateError) in
                try store.verify(record)
            }
        }
        expectContents(store, .failClosed, [("a", "a"), ("b", "b")], after: "opening moved values")
    }

    /// Damaged rows: a row made untrustworthy behind the store's back is still listed, marked
    /// damaged, refuses to open with `errSecDecode`, and can be deleted; its neighbours are unharmed.
    func checkDamagedRows(_ store: any ItemStore, damage: (any ItemStore, ItemID) throws -> Void) {
        guard
            let added = attempt(
                .damagedRows, "adding two items",
                { () throws(KeygateError) in
                    try store.insert([ContractItems.item("intact", "intact"), ContractItems.item("damaged", "damaged")])
                }), added.count == 2
        else { return }
        do {
            try damage(store, added[1].id)
        } catch {
            fail(.damagedRows, "the test's damaging hook failed: \(error)")
            return
        }
        guard
            let read = attempt(
                .damagedRows, "a search with a damaged row",
                { () throws(KeygateError) in
                    try store.items(matching: ContractItems.everything)
                })
        else { return }
        records += read
        let marks = read.map { "\($0.fields.identity.account): \($0.damage == nil ? "intact" : "damaged")" }
        guard read.count == 2, read[0].damage == nil, read[1].damage != nil else {
            fail(
                .damagedRows,
                "a search with one damaged row returned \(marks); expected [intact: intact, damaged: damaged]")
            return
        }
        expectFailure(.damagedRows, .decode, "opening a damaged row") { () throws(KeygateError) in
            _ = try store.open(read[1])
        }
        _ = attempt(.damagedRows, "deleting a damaged row") { () throws(KeygateError) in try store.delete([read[1].id])
        }
        expectContents(store, .damagedRows, [("intact", "intact")], after: "deleting a damaged row")
    }
}
