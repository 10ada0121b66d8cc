import KeygatePolicy
import KeygateStore

extension ContractRun {
    /// Consistent reads: fields come back exactly as stored, in the order items were added; a
    /// filter matches every attribute it gives; a record read before a replacement never opens
    /// to the new value.
    func checkConsistentReads(_ store: any ItemStore) {
        let bound = try! AccessControl(
            protection: .whenUnlockedThisDeviceOnly, flags: [.biometryCurrentSet, .or, .devicePasscode]
        ).bound(to: EnrollmentSetHash(templateIDs: ["finger-1"])!)
        let passcodeSet = try! AccessControl(protection: .whenPasscodeSetThisDeviceOnly)
        let written = [
            ContractItems.fields("first", service: "s1", label: "L", generic: [0, 1, 2], control: bound),
            ContractItems.fields("second", service: "s1", sync: true),
            ContractItems.fields("third", service: "s2", group: "group.b", control: passcodeSet),
        ]
        guard
            attempt(
                .consistentReads, "adding items in two batches",
                { () throws(KeygateError) -> Void in
                    try store.insert([ContractItems.item(written[0], "first")])
                    try store.insert([
                        ContractItems.item(written[1], "second"), ContractItems.item(written[2], "third"),
                    ])
                }) != nil
        else { return }
        expectContents(
            store, .consistentReads, [("first", "first"), ("second", "second"), ("third", "third")],
            after: "adding three items")
        if let found = attempt(
            .consistentReads, "a search",
            { () throws(KeygateError) in
                try store.items(matching: ContractItems.everything)
            })
        {
            expect(
                found.map(\.fields) == written, .consistentReads,
                "the fields read back differ from the fields stored (label, generic, access control or dates)")
        }
        checkFilters(store)
        checkStaleRecordsOpenToTheirOwnValue(store)
    }

    private func checkFilters(_ store: any ItemStore) {
        let groups = ContractItems.groups
        let cases: [(ItemFilter, [String], String)] = [
            (ItemFilter(accessGroups: groups), ["first", "third"], "non-synchronizable items by default"),
            (ItemFilter(accessGroups: groups, synchronizable: true), ["second"], "synchronizable items"),
            (ItemFilter(accessGroups: ["group.b"], synchronizable: nil), ["third"], "one access group"),
            (ItemFilter(accessGroups: [], synchronizable: nil), [], "no access group"),
            (ItemFilter(accessGroups: groups, service: "s1", synchronizable: nil), ["first", "second"], "a service"),
            (ItemFilter(accessGroups: groups, label: "L"), ["first"], "a label"),
            (ItemFilter(accessGroups: groups, generic: [0, 1, 2]), ["first"], "a generic attribute"),
            (ItemFilter(accessGroups: groups, protection: .whenPasscodeSetThisDeviceOnly), ["third"], "a class"),
            (ItemFilter(accessGroups: groups, account: "nobody"), [], "an account no item has"),
        ]
        for (filter, expected, what) in cases {
            guard
                let found = attempt(
                    .consistentReads, "a search by \(what)",
                    { () throws(KeygateError) in
                        try store.items(matching: filter)
                    })
            else { continue }
            let accounts = found.map(\.fields.identity.account)
            expect(
                accounts == expected, .consistentReads, "a search by \(what) found \(accounts); expected \(expected)")
        }
    }

    /// A record read before its item was replaced opens to the value read with it, or fails;
    /// never to the new value.
    private func checkStaleRecordsOpenToTheirOwnValue(_ store: any ItemStore) {
        guard
            let read = attempt(
                .consistentReads, "a search",
                { () throws(KeygateError) in
                    try store.items(matching: ContractItems.everything)
                }), let stale = read.first
        else { return }
        records += read
        guard
            let before = attempt(
                .consistentReads, "opening an item",
                { () throws(KeygateError) in
                    ContractItems.text(try store.open(stale))
                })
        else { return }
        _ = attempt(.consistentReads, "replacing an item") { () throws(KeygateError) in
            try store.replace([
                ItemReplacement(id: stale.id, fields: stale.fields, data: SecretData(ContractItems.value("replaced")))
            ])
        }
        if let value = try? store.open(stale) {
            expect(
                ContractItems.text(value) == before, .consistentReads,
                "a record read before its item was replaced opens to the new value")
        }
    }
}
