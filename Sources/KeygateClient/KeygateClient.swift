public import KeygateItems
public import KeygatePAM
public import KeygatePolicy
public import KeygateProtocol

/// The daemon mode's keychain: the same add / copyMatching / update / delete as the embedded
/// ``Keygate/Keychain``, run by `keygated` on the caller's own store (the daemon knows the
/// caller from the kernel, never from anything this client says).
///
/// - One connection, one request in flight: calls from several tasks are safe and run one
///   after another, in the order they were made. A call on an idle connection waits for its
///   reply on its own thread for at most 2 ms; the rest of a longer exchange (a prompt, a
///   late reply) and calls made meanwhile run on the connection's serial queue.
/// - Errors are the embedded facade's: the daemon's error frames carry the status, so a
///   refusal is the same `KeygateError` (`errSecItemNotFound`, `errSecDuplicateItem`,
///   `errSecParam`, …). A daemon that is not running, refuses the connection, goes away or
///   stops answering is `errSecNotAvailable` with a message naming the socket; the next call
///   connects again.
/// - Prompts the daemon relays (its PAM conversation) are answered by ``passphraseSource``: a
///   nil answer, or no source, cancels the request (`errSecUserCanceled`). ``cancel()``, or
///   cancelling the calling task, cancels the request in flight.
public final class KeygateClient: KeychainAccess {
    /// Where `keygated` listens unless told otherwise: `/run/keygate/keygated.sock`.
    public static let defaultSocketPath = "/run/keygate/keygated.sock"

    /// The socket this client talks to.
    public let socketPath: String
    /// The access groups asked for in hello; the first is the default group of new items.
    public let accessGroups: [String]
    /// Where answers to relayed prompts come from (nil: every prompt is cancelled).
    public let passphraseSource: (any PassphraseSource)?
    private let connection: ClientConnection

    /// Connects to `keygated` at `socketPath` and says hello.
    /// - Parameters:
    ///   - socketPath: the daemon's socket.
    ///   - accessGroups: the groups to use; the daemon grants only those its policies give
    ///     this program.
    ///   - clientName: a name for the daemon's log.
    ///   - passphraseSource: answers relayed PAM prompts (a terminal, a descriptor, code).
    ///   - replyTimeout: how long to wait for each frame of the daemon's answer, in seconds
    ///     (not counting the time the passphrase source takes).
    /// - Throws: `errSecNotAvailable` naming the socket when no daemon answers there;
    ///   `errSecParam` for a socket path too long for a Unix socket; the daemon's refusal of
    ///   the hello (`errSecUnimplemented` for a protocol it does not speak, `errSecParam` for
    ///   unusable group names, `errSecNotAvailable` when the caller's store cannot be opened).
    public init(
        socketPath: String = KeygateClient.defaultSocketPath, accessGroups: [String],
        clientName: String = "KeygateClient", passphraseSource: (any PassphraseSource)? = nil,
        replyTimeout: Double = 120
    ) throws(KeygateError) {
        self.socketPath = socketPath
        self.accessGroups = accessGroups
        self.passphraseSource = passphraseSource
        connection = ClientConnection(
            path: socketPath, accessGroups: accessGroups, clientName: clientName,
            passphraseSource: passphraseSource, replyTimeout: replyTimeout)
        try connection.open()
    }

    /// The daemon's version string, from the latest hello.
    public var daemonVersion: String { connection.daemonVersion }

    /// Cancels the request in flight, if any: the daemon ends its prompt and the call throws
    /// `errSecUserCanceled` (or returns, when the daemon had already finished it).
    public func cancel() { connection.cancelInFlight() }

    /// Closes the connection now; a later call connects again.
    public func close() { connection.close() }

    // MARK: - Items

    /// Adds an item, as ``Keygate/Keychain/add(_:context:)`` does embedded. Of `context` only
    /// the interaction policy is sent (used when the request sets none).
    public func add(_ request: AddRequest, context: AuthenticationContext? = nil) async throws(KeygateError) {
        var request = request
        if request.authenticationUI == nil, let context { request.authenticationUI = context.interaction }
        try await expectDone(.add(request), reason: "")
    }

    /// Finds items, as ``Keygate/Keychain/copyMatching(_:context:)`` does embedded. Of `context`
    /// the reuse window and the interaction policy are sent; its proofs stay here (the daemon
    /// proves on its own).
    public func copyMatching(_ query: ItemQuery, context: AuthenticationContext? = nil) async throws(KeygateError)
        -> [MatchedItem]
    {
        try await copyMatching(Self.merge(query, context), reuseSeconds: Self.window(context))
    }

    /// Finds items, reusing a proof of this caller made up to `reuseSeconds` ago (0…300).
    /// - Throws: `errSecParam` above 300 s (nothing is sent), and whatever the gate refuses with.
    public func copyMatching(_ query: ItemQuery, reuseSeconds: UInt32) async throws(KeygateError) -> [MatchedItem] {
        try ReuseWindow.check(reuseSeconds)
        let reply = try await perform(.copyMatching(query, reuseSeconds: reuseSeconds), reason: query.operationPrompt)
        guard case .items(let items) = reply else { throw unexpected(reply) }
        return items
    }

    /// Changes items, as ``Keygate/Keychain/update(_:changes:context:)`` does embedded (of
    /// `context`, the reuse window and interaction policy are sent).
    public func update(_ query: ItemQuery, changes: ItemChanges, context: AuthenticationContext? = nil)
        async throws(KeygateError)
    {
        try await update(Self.merge(query, context), changes: changes, reuseSeconds: Self.window(context))
    }

    /// Changes items, reusing a proof made up to `reuseSeconds` ago (0…300).
    /// - Throws: `errSecParam` above 300 s (nothing is sent), and whatever the gate refuses with.
    public func update(_ query: ItemQuery, changes: ItemChanges, reuseSeconds: UInt32) async throws(KeygateError) {
        try ReuseWindow.check(reuseSeconds)
        try await expectDone(.update(query, changes, reuseSeconds: reuseSeconds), reason: query.operationPrompt)
    }

    /// Deletes items, as ``Keygate/Keychain/delete(_:context:)`` does embedded (of `context`,
    /// the reuse window and interaction policy are sent).
    public func delete(_ query: ItemQuery, context: AuthenticationContext? = nil) async throws(KeygateError) {
        try await delete(Self.merge(query, context), reuseSeconds: Self.window(context))
    }

    /// Deletes items, reusing a proof made up to `reuseSeconds` ago (0…300).
    /// - Throws: `errSecParam` above 300 s (nothing is sent), and whatever the gate refuses with.
    public func delete(_ query: ItemQuery, reuseSeconds: UInt32) async throws(KeygateError) {
        try ReuseWindow.check(reuseSeconds)
        try await expectDone(.delete(query, reuseSeconds: reuseSeconds), reason: query.operationPrompt)
    }

    // MARK: - The daemon

    /// The daemon's view of this connection: the caller's uid, gid, pid and executable as the
    /// kernel reports them, and the daemon's version.
    public func status() async throws(KeygateError) -> StatusPayload {
        let reply = try await perform(.status, reason: nil)
        guard case .statusReply(let status) = reply else { throw unexpected(reply) }
        return status
    }

    /// The caller's own last `limit` audit records (0: all), one JSON text each.
    public func auditShow(limit: UInt32 = 0) async throws(KeygateError) -> [String] {
        let reply = try await perform(.auditShow(limit: limit), reason: nil)
        guard case .auditRecords(let records) = reply else { throw unexpected(reply) }
        return records
    }

    /// Verifies the caller's own audit trail: how many records were checked, and the first
    /// problem found (nil: the chain holds).
    public func auditVerify() async throws(KeygateError) -> (records: UInt64, problem: String?) {
        let reply = try await perform(.auditVerify, reason: nil)
        guard case .auditVerified(let records, let problem) = reply else { throw unexpected(reply) }
        return (records, problem)
    }

    /// Makes the daemon forget every proof it would reuse for this caller (`keygate lock`).
    public func lock() async throws(KeygateError) {
        try await expectDone(.lock, reason: nil)
    }

    // MARK: - Plumbing

    func perform(_ request: Message, reason: String?) async throws(KeygateError) -> Message {
        let reply = try await connection.perform(request, reason: reason ?? "")
        if let error = reply.keygateError { throw error }
        return reply
    }

    func expectDone(_ request: Message, reason: String?) async throws(KeygateError) {
        let reply = try await perform(request, reason: reason)
        guard case .done = reply else { throw unexpected(reply) }
    }

    func unexpected(_ reply: Message) -> KeygateError {
        KeygateError(.notAvailable, "keygated at \(socketPath) answered with an unexpected \(reply.type)")
    }

    /// The query with the context's interaction policy when it sets none itself.
    private static func merge(_ query: ItemQuery, _ context: AuthenticationContext?) -> ItemQuery {
        var query = query
        if query.authenticationUI == nil, let context { query.authenticationUI = context.interaction }
        return query
    }

    /// The context's reuse window (0…300, as the context clamps it); 0 without one.
    static func window(_ context: AuthenticationContext?) -> UInt32 {
        UInt32(clamping: context?.reuseSeconds ?? 0)
    }
}
