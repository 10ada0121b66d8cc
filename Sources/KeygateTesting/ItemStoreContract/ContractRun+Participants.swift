import KeygatePolicy
import KeygateStore
import Synchronization

extension ContractRun {
    /// Participants: a write handed a participant writes its changes in the same commit and
    /// says so (`didCommit`); a write that fails writes none of them and never says it
    /// committed; a store that keeps no metadata never asks a participant anything.
    func checkParticipants(_ store: any ItemStore) {
        let rows = store as? any MetadataStore
        let added = ContractParticipant(value: "1-added")
        let inserted = attempt(.participants, "adding an item with a participant") { () throws(KeygateError) in
            try store.insert([ContractItems.item("a", "a")], joining: added)
        }
        guard let inserted, inserted.count == 1 else { return }
        guard let rows else {
            expect(
                added.events.isEmpty, .participants,
                "a store that keeps no metadata told a participant \(added.events); it must tell it nothing")
            return
        }
        expect(
            added.events == ["asked", "committed"], .participants,
            "an add told its participant \(added.events); expected [asked, committed]")
        expectRow(rows, "1-added", after: "an add with a participant")
        let refused = ContractParticipant(value: "2-refused")
        expectFailure(.participants, .duplicateItem, "adding a duplicate with a participant") {
            () throws(KeygateError) in try store.insert([ContractItems.item("a", "a2")], joining: refused)
        }
        expect(
            !refused.events.contains("committed"), .participants,
            "a failed add told its participant \(refused.events); it must not say committed")
        expectRow(rows, "1-added", after: "a failed add with a participant")
        let replaced = ContractParticipant(value: "3-replaced")
        _ = attempt(.participants, "replacing an item with a participant") { () throws(KeygateError) in
            try store.replace(
                [ItemReplacement(id: inserted[0].id, fields: ContractItems.fields("b"), data: SecretData("b"))],
                joining: replaced)
        }
        expect(replaced.events == ["asked", "committed"], .participants, "a replace told \(replaced.events)")
        expectRow(rows, "3-replaced", after: "a replace with a participant")
        let deleted = ContractParticipant(value: "4-deleted")
        _ = attempt(.participants, "deleting an item with a participant") { () throws(KeygateError) in
            try store.delete([inserted[0].id], joining: deleted)
        }
        expect(deleted.events == ["asked", "committed"], .participants, "a delete told \(deleted.events)")
        expectRow(rows, "4-deleted", after: "a delete with a participant")
        _ = attempt(.participants, "a transaction of named rows of its own") { () throws(KeygateError) in
            try rows.writeMetadata([.raise(name: ContractParticipant.name, value: "0-lower")])
        }
        expectRow(rows, "4-deleted", after: "a raise to a value that sorts before the row's")
    }

    /// Checks that the participant's row holds `value`.
    private func expectRow(_ rows: any MetadataStore, _ value: String, after what: String) {
        let found = attempt(.participants, "reading the named rows after \(what)") {
            () throws(KeygateError) -> String? in
            try rows.readMetadata { (reading) throws(KeygateError) -> String? in
                try reading.value(of: ContractParticipant.name)
            }
        }
        guard let found else { return }
        expect(
            found == value, .participants,
            "after \(what) the participant's row holds \(found ?? "nothing"); expected \(value)")
    }
}

/// A participant that sets one row to its value and notes what the store told it.
final class ContractParticipant: TransactionParticipant {
    static let name = "contract.participant"
    let value: String
    private let told = Mutex<[String]>([])

    init(value: String) { self.value = value }

    var events: [String] { told.withLock { $0 } }

    func willCommit(into owner: AnyObject) -> [MetadataChange] {
        told.withLock { $0.append("asked") }
        return [.raise(name: Self.name, value: value)]
    }

    func didCommit() { told.withLock { $0.append("committed") } }

    func didRollBack() { told.withLock { $0.append("rolled back") } }
}
