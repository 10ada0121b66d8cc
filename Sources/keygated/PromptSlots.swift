import Synchronization

/// How many requests wait on a relayed prompt at once: at most `max-prompts` for all users
/// together and `max-prompts-per-user` for one uid. A request that finds no free slot never
/// reaches PAM (it is `errSecInteractionNotAllowed` at once), so a user who opens many prompts
/// and never answers them holds a bounded number of PAM threads and never blocks other users'
/// prompts beyond the global limit.
final class PromptSlots: Sendable {
    private let total: Int
    private let perUser: Int
    private let counts = Mutex<(total: Int, perUser: [UInt32: Int])>((0, [:]))

    init(total: Int, perUser: Int) {
        self.total = total
        self.perUser = perUser
    }

    /// Takes a slot for `uid`; false when a limit is reached (nothing taken).
    func acquire(_ uid: UInt32) -> Bool {
        counts.withLock { counts in
            guard counts.total < total, counts.perUser[uid, default: 0] < perUser else { return false }
            counts.total += 1
            counts.perUser[uid, default: 0] += 1
            return true
        }
    }

    /// Gives back a slot `acquire` took.
    func release(_ uid: UInt32) {
        counts.withLock { counts in
            counts.total -= 1
            counts.perUser[uid, default: 1] -= 1
            if counts.perUser[uid] == 0 { counts.perUser[uid] = nil }
        }
    }
}
