import KeygatePolicy
import KeygateStore

extension ContractRun {
    /// All or nothing: a batch with one bad entry changes nothing; a swap of two identities in
    /// one replacement is not a collision; deleting ignores ids already gone.
    func checkAllOrNothing(_ store: any ItemStore) {
        guard
            let records = attempt(
                .allOrNothing, "adding three items",
                { () throws(KeygateError) in
                    try store.insert([
                        ContractItems.item("a", "a"), ContractItems.item("b", "b"), ContractItems.item("c", "c"),
                    ])
                }), records.count == 3
        else {
            fail(.allOrNothing, "adding three items in one batch did not return three records")
            return
        }
        expectFailure(.allOrNothing, .duplicateItem, "adding a batch whose second item exists") {
            () throws(KeygateError) in try store.insert([ContractItems.item("d", "d"), ContractItems.item("a", "a2")])
        }
        expectContents(store, .allOrNothing, [("a", "a"), ("b", "b"), ("c", "c")], after: "a refused batch add")
        func replacement(_ record: ItemRecord, _ account: String, _ name: String) -> ItemReplacement {
            ItemReplacement(
                id: record.id, fields: ContractItems.fields(account), data: SecretData(ContractItems.value(name)))
        }
        expectFailure(.allOrNothing, .duplicateItem, "a replacement whose second entry collides with another item") {
            () throws(KeygateError) in
            try store.replace([replacement(records[0], "x", "x"), replacement(records[1], "c", "b")])
        }
        expectContents(store, .allOrNothing, [("a", "a"), ("b", "b"), ("c", "c")], after: "a refused replacement")
        _ = attempt(.allOrNothing, "swapping two items' identities in one replacement") { () throws(KeygateError) in
            try store.replace([replacement(records[0], "b", "a"), replacement(records[1], "a", "b")])
        }
        expectContents(store, .allOrNothing, [("b", "a"), ("a", "b"), ("c", "c")], after: "a swap")
        _ = attempt(.allOrNothing, "deleting an item") { () throws(KeygateError) in try store.delete([records[2].id]) }
        expectFailure(.allOrNothing, .itemNotFound, "a replacement of an item that is gone") {
            () throws(KeygateError) in
            try store.replace([replacement(records[0], "z", "z"), replacement(records[2], "c", "c")])
        }
        expectContents(store, .allOrNothing, [("b", "a"), ("a", "b")], after: "a replacement of a deleted item")
        _ = attempt(.allOrNothing, "deleting a batch with ids already gone") { () throws(KeygateError) in
            try store.delete([records[0].id, records[2].id, ItemID(Int64.max)])
        }
        expectContents(store, .allOrNothing, [("a", "b")], after: "deleting ids some of which were gone")
    }

    /// No lost updates: a replacement made from a record another writer changed since, or from
    /// a record the store never made, fails with `errSecNotAvailable`, alone or in a batch, and
    /// changes nothing.
    func checkNoLostUpdates(_ store: any ItemStore) {
        guard
            attempt(
                .noLostUpdates, "adding two items",
                { () throws(KeygateError) in
                    try store.insert([ContractItems.item("shared", "v1"), ContractItems.item("other", "o1")])
                }) != nil,
            let read = attempt(
                .noLostUpdates, "a search",
                { () throws(KeygateError) in
                    try store.items(matching: ContractItems.everything)
                }), read.count == 2
        else { return }
        let stale = read[0]
        _ = attempt(.noLostUpdates, "replacing an item by id") { () throws(KeygateError) in
            try store.replace([
                ItemReplacement(id: stale.id, fields: stale.fields, data: SecretData(ContractItems.value("v2")))
            ])
        }
        expectFailure(.noLostUpdates, .notAvailable, "a replacement of an item changed since it was read") {
            () throws(KeygateError) in
            try store.replace([
                ItemReplacement(
                    replacing: read[1], fields: read[1].fields, data: SecretData(ContractItems.value("o2"))),
                ItemReplacement(replacing: stale, fields: stale.fields, data: SecretData(ContractItems.value("v3"))),
            ])
        }
        expectContents(store, .noLostUpdates, [("shared", "v2"), ("other", "o1")], after: "a stale replacement")
        guard
            let fresh = attempt(
                .noLostUpdates, "a search",
                { () throws(KeygateError) in
                    try store.items(matching: ContractItems.everything)
                }), fresh.count == 2
        else { return }
        _ = attempt(.noLostUpdates, "a replacement of an item unchanged since it was read") {
            () throws(KeygateError) in
            try store.replace([
                ItemReplacement(
                    replacing: fresh[0], fields: fresh[0].fields, data: SecretData(ContractItems.value("v3")))
            ])
        }
        expectContents(store, .noLostUpdates, [("shared", "v3"), ("other", "o1")], after: "a fresh replacement")
        let foreign = ItemRecord(id: fresh[0].id, fields: fresh[0].fields, sealed: [0xDE, 0xAD])
        expectFailure(.noLostUpdates, .notAvailable, "a replacement made from a record the store never made") {
            () throws(KeygateError) in
            try store.replace([
                ItemReplacement(replacing: foreign, fields: foreign.fields, data: SecretData(ContractItems.value("v4")))
            ])
        }
        expectContents(store, .noLostUpdates, [("shared", "v3"), ("other", "o1")], after: "a foreign replacement")
    }
}
