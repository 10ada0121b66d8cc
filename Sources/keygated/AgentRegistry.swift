import KeygateServing
import Synchronization

/// The authentication agents registered with the daemon, one per login session: keyed by the
/// uid and logind session the kernel reports for the agent's process (a process in no session
/// registers for its uid's requests made outside any session). Nothing an agent or a requester
/// says chooses the key: a request is routed by its own caller's uid and session, so another
/// uid's request never reaches an agent.
final class AgentRegistry: Sendable {
    struct Key: Hashable, Sendable {
        let uid: UInt32
        /// The logind session, nil for processes in none.
        let session: String?
    }

    private let agents = Mutex<[Key: AgentChannel]>([:])

    init() {}

    /// Registers `agent` for its own uid and session.
    /// - Returns: false when another agent is registered there and still connected.
    func register(_ agent: AgentChannel) -> Bool {
        let key = Key(uid: agent.identity.uid, session: agent.identity.session)
        return agents.withLock { agents in
            if let present = agents[key], present.isConnected { return false }
            agents[key] = agent
            return true
        }
    }

    /// Forgets `agent` (its connection ended), unless another has taken its place.
    func unregister(_ agent: AgentChannel) {
        let key = Key(uid: agent.identity.uid, session: agent.identity.session)
        agents.withLock { agents in
            if agents[key] === agent { agents[key] = nil }
        }
    }

    /// The connected agent of `uid`'s `session` (nil: outside any session), if any.
    func agent(uid: UInt32, session: String?) -> AgentChannel? {
        agents.withLock { agents in
            guard let agent = agents[Key(uid: uid, session: session)], agent.isConnected else { return nil }
            return agent
        }
    }
}
