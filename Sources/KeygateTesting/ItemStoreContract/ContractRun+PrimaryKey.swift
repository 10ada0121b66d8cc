import KeygatePolicy
import KeygateStore

extension ContractRun {
    /// Primary key: one item per identity; synchronizable and access group are part of it; names
    /// are compared byte for byte (the NFC and NFD forms of a name are two items).
    func checkPrimaryKey(_ store: any ItemStore) {
        guard
            attempt(
                .primaryKey, "adding an item",
                { () throws(KeygateError) in
                    try store.insert([ContractItems.item("alice", "alice")])
                }) != nil
        else { return }
        expectFailure(.primaryKey, .duplicateItem, "adding a second item with an existing identity") {
            () throws(KeygateError) in
            try store.insert([ContractItems.item(ContractItems.fields("alice", label: "other"), "again")])
        }
        expectFailure(.primaryKey, .duplicateItem, "adding two items with one new identity in one batch") {
            () throws(KeygateError) in
            try store.insert([ContractItems.item("twin", "twin-1"), ContractItems.item("twin", "twin-2")])
        }
        expectContents(store, .failClosed, [("alice", "alice")], after: "refused duplicate adds")
        let others = [
            ContractItems.item(ContractItems.fields("alice", sync: true), "alice-sync"),
            ContractItems.item(ContractItems.fields("alice", group: "group.b"), "alice-b"),
        ]
        _ = attempt(.primaryKey, "adding the identity again, synchronizable and in another access group") {
            () throws(KeygateError) in try store.insert(others)
        }
        checkNamesAreBytes(store)
    }

    /// "café" composed (NFC) and decomposed (NFD) are equal Swift strings but two identities.
    private func checkNamesAreBytes(_ store: any ItemStore) {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        guard
            attempt(
                .primaryKey, "adding a service named in NFC and another in NFD",
                { () throws(KeygateError) -> Void in
                    try store.insert([ContractItems.item(ContractItems.fields("nfd", service: composed), "composed")])
                    try store.insert([
                        ContractItems.item(ContractItems.fields("nfd", service: decomposed), "decomposed")
                    ])
                }) != nil
        else { return }
        for (service, name) in [(composed, "composed"), (decomposed, "decomposed")] {
            var filter = ContractItems.everything
            filter.service = service
            filter.account = "nfd"
            guard
                let found = attempt(
                    .primaryKey, "a search by a service name's bytes",
                    { () throws(KeygateError) in
                        try store.items(matching: filter)
                    })
            else { continue }
            let bytes = Array(service.utf8)
            guard found.count == 1 else {
                fail(.primaryKey, "a search for the service \(bytes) found \(found.count) items; expected 1")
                continue
            }
            expect(
                Array(found[0].fields.identity.service.utf8) == bytes, .primaryKey,
                "the service \(bytes) was returned as \(Array(found[0].fields.identity.service.utf8))")
            let value = attempt(.primaryKey, "opening the item of \(bytes)") { () throws(KeygateError) in
                try store.open(found[0])
            }
            expect(
                value.map(ContractItems.text) == ContractItems.value(name), .primaryKey,
                "the item of the service \(bytes) opens to the other form's value")
        }
    }

    /// Eight writers adding one identity at once: exactly one succeeds, the others fail with
    /// `errSecDuplicateItem`.
    func checkConcurrentInserts(_ store: any ItemStore) async {
        let outcomes = await withTaskGroup(of: KeygateStatus?.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    do throws(KeygateError) {
                        try store.insert([ContractItems.item("raced", "writer-\(writer)")])
                        return nil
                    } catch {
                        return error.status
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let added = outcomes.filter { $0 == nil }.count
        expect(added == 1, .primaryKey, "\(added) of 8 concurrent adds of one identity succeeded; expected 1")
        let others = Set(outcomes.compactMap { $0 })
        expect(
            others.isSubset(of: Set<KeygateStatus>([.duplicateItem])), .primaryKey,
            "concurrent adds of one identity failed with \(others.sorted { $0.rawValue < $1.rawValue }); expected errSecDuplicateItem"
        )
        let rows = attempt(.primaryKey, "a search after concurrent adds") { () throws(KeygateError) in
            try store.items(matching: ContractItems.everything).count
        }
        expect(rows == 1, .primaryKey, "after 8 concurrent adds of one identity the store holds \(rows ?? 0) items")
    }
}
