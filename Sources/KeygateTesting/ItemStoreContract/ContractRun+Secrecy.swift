import KeygatePolicy
import KeygateStore

extension ContractRun {
    /// Bounded values: a value of exactly the limit is stored; one byte more is refused with
    /// `errSecParam` and a message giving the limit, in an add or a replacement, changing nothing.
    func checkBoundedValues(_ store: any ItemStore, maximum: Int) {
        func bytes(_ count: Int) -> SecretData { SecretData(bytes: [UInt8](repeating: 0x61, count: count)) }
        guard
            attempt(
                .boundedValues, "adding an item",
                { () throws(KeygateError) in
                    try store.insert([ContractItems.item("small", "small")])
                }) != nil
        else { return }
        let over = expectFailure(.boundedValues, .param, "adding a value of \(maximum + 1) bytes") {
            () throws(KeygateError) in
            try store.insert([
                ContractItems.item("also", "also"),
                NewItem(fields: ContractItems.fields("big"), data: bytes(maximum + 1)),
            ])
        }
        if let over {
            expect(
                over.message.contains("\(maximum)"), .boundedValues,
                "the refusal of a value over the limit does not give the limit (\(maximum)): \(over.message)")
        }
        expectContents(store, .boundedValues, [("small", "small")], after: "a refused oversized add")
        if let record = try? store.items(matching: ContractItems.everything).first {
            expectFailure(.boundedValues, .param, "replacing a value with \(maximum + 1) bytes") {
                () throws(KeygateError) in
                try store.replace([ItemReplacement(id: record.id, fields: record.fields, data: bytes(maximum + 1))])
            }
            expectContents(store, .boundedValues, [("small", "small")], after: "a refused oversized replacement")
        }
        let stored = attempt(.boundedValues, "adding a value of exactly \(maximum) bytes") {
            () throws(KeygateError) in
            try store.insert([NewItem(fields: ContractItems.fields("limit"), data: bytes(maximum))])
        }
        if let record = stored?.first {
            let length = attempt(.boundedValues, "opening a value of \(maximum) bytes") { () throws(KeygateError) in
                try store.open(record).count
            }
            expect(length == maximum, .boundedValues, "a value of \(maximum) bytes opened with \(length ?? 0) bytes")
        }
    }

    /// Secrets stay secret: no stored value appears in the store's or a record's description
    /// (plain or reflecting), nor in any error message the run saw.
    func checkSecretsStaySecret(_ store: any ItemStore) {
        if let added = attempt(
            .secretsStaySecret, "adding an item",
            { () throws(KeygateError) in
                try store.insert([ContractItems.item("shown", "shown")])
            })
        {
            records += added
            expectFailure(.primaryKey, .duplicateItem, "adding an existing identity") { () throws(KeygateError) in
                try store.insert([ContractItems.item("shown", "shown-again")])
            }
        }
        records += (try? store.items(matching: ContractItems.everything)) ?? []
        let marker = ItemStoreContract.secretMarker
        for record in records {
            for text in ["\(record)", String(reflecting: record)] where text.contains(marker) {
                fail(.secretsStaySecret, "the description of the record of \(record.fields.identity) shows its value")
                break
            }
        }
        for text in ["\(store)", String(reflecting: store)] where text.contains(marker) {
            fail(.secretsStaySecret, "the store's description shows a stored value")
        }
        if messages.contains(where: { $0.contains(marker) }) {
            fail(.secretsStaySecret, "an error message shows a stored value")
        }
    }
}
