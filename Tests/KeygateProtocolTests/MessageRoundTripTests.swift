import Keygate
import KeygatePolicy
import KeygateProtocol
import KeygateStore
import Testing

/// Every message survives encode → frame bytes → decode unchanged.
@Suite struct MessageRoundTripTests {
    static let presence = try! AccessControl(protection: .whenPasscodeSetThisDeviceOnly, flags: .userPresence)
    static let keyPresence = try! AccessControl(
        protection: .whenUnlockedThisDeviceOnly, flags: [.privateKeyUsage, .userPresence])

    static let samples: [Message] = [
        .hello(
            minimumVersion: 1, maximumVersion: 3, accessGroups: ["a", "b.c"], client: "keygate",
            challenge: Array(0..<16)),
        .hello(
            minimumVersion: 3, maximumVersion: 3, accessGroups: ["g"], client: "unasked", challenge: Array(0..<16),
            answersPrompts: false),
        .challenge(nonce: [UInt8](repeating: 0xA5, count: 16)),
        .registerAgent,
        .agentPrompt(
            AgentPrompt(
                style: .echoOff, text: "Password: ", purpose: "read of mail/me@g", program: "/usr/bin/git",
                pid: 4242)),
        .agentPrompt(AgentPrompt(style: .textInfo, text: "Swipe", purpose: "", program: "", pid: -1)),
        .status,
        .add(
            AddRequest(
                service: "api", account: "me", accessGroup: "g", label: "L", generic: [0, 1, 255],
                synchronizable: true, protection: .afterFirstUnlock, data: SecretData(bytes: [1, 2, 3]),
                authenticationUI: .fail, otherAttributes: ["srvr": "x", "acct2": ""])),
        .add(AddRequest(service: "s", account: "a", accessControl: presence, data: SecretData(bytes: []))),
        .copyMatching(
            ItemQuery(
                service: "s", account: nil, accessGroup: "g", label: "l", generic: [9], synchronizable: .any,
                protection: .whenUnlocked, matchLimit: .count(7), returnData: true, returnAttributes: true,
                authenticationUI: .skip, operationPrompt: "why", otherAttributes: ["k": "v"]),
            reuseSeconds: 300),
        .copyMatching(ItemQuery(matchLimit: .all)),
        // A count below 1 travels as 0 for the facade to refuse, as it does embedded.
        .copyMatching(ItemQuery(matchLimit: .count(0)), reuseSeconds: 301),
        .update(
            ItemQuery(service: "s", matchLimit: .one),
            ItemChanges(
                service: "t", account: "u", accessGroup: "g", label: "l", generic: [], synchronizable: false,
                protection: .accessControl(presence), data: SecretData(bytes: [7]), otherAttributes: ["z": "1"]),
            reuseSeconds: 10),
        .update(ItemQuery(), ItemChanges(protection: .accessible(.afterFirstUnlock))),
        .delete(ItemQuery(service: "s", synchronizable: .yes), reuseSeconds: UInt32.max),
        .delete(ItemQuery()),
        .auditShow(limit: 20),
        .auditVerify,
        .promptAnswer(SecretData("pass")),
        .promptAnswer(nil),
        .cancel,
        .lock,
        .createKey(
            NewKeyRequest(
                type: .p256, label: "deploy", applicationTag: [1, 2], accessGroup: "g",
                protection: .accessControl(Self.keyPresence), synchronizable: false)),
        .createKey(NewKeyRequest(type: .ed25519), privateKey: SecretData(bytes: Array(repeating: 9, count: 32))),
        .findKeys(
            KeyQuery(
                label: "l", applicationTag: [], applicationLabel: Array(repeating: 3, count: 20), type: .ed25519,
                accessGroup: "g", operationPrompt: "why", authenticationUI: .fail)),
        .findKeys(KeyQuery()),
        .updateKeys(KeyQuery(label: "a"), KeyChanges(label: "b", applicationTag: [5])),
        .updateKeys(KeyQuery(), KeyChanges()),
        .deleteKeys(KeyQuery(type: .p256)),
        .sign(
            input: Array("m".utf8), algorithm: .ecdsaSignatureDigestX962SHA256, key: KeyQuery(label: "k"),
            reuseSeconds: 30),
        .keyAgreement(peer: [4] + Array(repeating: 1, count: 64), key: KeyQuery(label: "k")),
        .keys([
            KeyFields(
                accessGroup: "g", label: "deploy", applicationTag: [1],
                applicationLabel: Array(repeating: 7, count: 20),
                type: .p256, tokenID: "keygate.software", imported: true,
                publicKey: [4] + Array(repeating: 2, count: 64),
                accessControl: Self.keyPresence, created: Timestamp(nanoseconds: 5), modified: Timestamp(nanoseconds: 6)
            ),
            KeyFields(
                accessGroup: "h", label: nil, applicationLabel: [], type: .ed25519, tokenID: "t", publicKey: [],
                accessControl: try! AccessControl(protection: .whenUnlocked), created: Timestamp(nanoseconds: 0),
                modified: Timestamp(nanoseconds: 0)),
        ]),
        .keys([]),
        .sshAgentConnection(accessGroups: ["keygate", "deploy"], reuseSeconds: 60),
        .decrypt(
            message: Array(repeating: 4, count: 90), algorithm: .cofactorVariableIVX963SHA256AESGCM,
            key: KeyQuery(label: "inbox"), reuseSeconds: 5),
        .plaintext(SecretData("opened")),
        .signature(Array(repeating: 0x30, count: 70)),
        .sharedSecret(SecretData(bytes: Array(repeating: 8, count: 32))),
        .helloReply(version: 1, daemonVersion: "keygated 0.1"),
        .statusReply(
            StatusPayload(
                mode: "daemon", uid: 1000, gid: 1000, pid: 4242, executable: "/usr/bin/keygate",
                daemonVersion: "v", pidfdSource: "SO_PEERPIDFD")),
        .done,
        .items([
            MatchedItem(
                attributes: ItemFields(
                    identity: ItemIdentity(accessGroup: "g", account: "a", service: "s"), label: nil,
                    generic: [3], accessControl: presence, created: Timestamp(nanoseconds: 5),
                    modified: Timestamp(nanoseconds: -1)),
                data: SecretData(bytes: [0xFF])),
            MatchedItem(
                attributes: ItemFields(
                    identity: ItemIdentity(accessGroup: "g", account: "b", service: "s", synchronizable: true),
                    label: "L", accessControl: try! AccessControl(protection: .afterFirstUnlock),
                    created: Timestamp(nanoseconds: 1), modified: Timestamp(nanoseconds: 2)),
                data: nil),
            MatchedItem(attributes: nil, data: nil),
        ]),
        .auditRecords(["{}", "{\"a\":1}"]),
        .auditVerified(records: 12, problem: nil),
        .auditVerified(records: 0, problem: "line 3: chain broken"),
        .prompt(style: .echoOff, text: "Password: "),
        .error(status: -25300, message: "no item"),
        .error(status: -25291, message: "changed meanwhile", cause: .condition(.racingWriter)),
        .error(status: -25291, message: "a condition of a newer daemon", cause: .condition(.init(rawValue: "later"))),
        .error(status: -36, message: "busy", cause: .sqlite(SQLiteResultCode(rawValue: 517))),
        .error(status: -25293, message: "PAM", cause: .pam(7)),
        .error(status: -36, message: "disk", cause: .errno(28)),
        .error(status: -26276, message: "sodium", cause: .sodium(function: "crypto_pwhash", result: -1)),
    ]

    /// An error frame carries the facade's error whole: a client gets back the very cause the
    /// daemon's facade threw, and a `catch` on the condition matches.
    @Test func anErrorKeepsItsCauseAcrossTheWire() throws {
        let thrown = KeygateError(.notAvailable, "changed meanwhile", condition: .racingWriter)
        let frame = try Message(thrown).frame(requestID: 3).encoded()
        var decoder = FrameDecoder()
        let decoded = try Message(try #require(try decoder.append(frame[...]).first))
        let error = try #require(decoded.keygateError)
        #expect(error.status == .notAvailable && error.message == "changed meanwhile")
        #expect(error.condition == .racingWriter)
        #expect(throws: KeygateError.self) {
            do { throw error } catch KeygateError.Condition.racingWriter { throw error } catch {
                Issue.record("no match")
            }
        }
        // A cause kind this version does not define is malformed, naming the field.
        var payload = Message.error(status: 1, message: "m", cause: .pam(1)).frame(requestID: 1).payload
        payload[payload.count - 5] = 99
        #expect(throws: ProtocolError.malformed("cause: unknown kind 99")) {
            _ = try Message(Frame(type: .error, requestID: 1, payload: payload))
        }
    }

    @Test func everyMessageTypeIsCovered() {
        #expect(Set(Self.samples.map(\.type)) == Set(MessageType.allCases))
    }

    @Test(arguments: samples.indices) func roundTrip(_ index: Int) throws {
        let message = Self.samples[index]
        let bytes = try message.frame(requestID: 77).encoded()
        var decoder = FrameDecoder()
        let frames = try decoder.append(bytes)
        #expect(frames.count == 1)
        #expect(frames[0].requestID == 77)
        #expect(frames[0].type == message.type)
        #expect(try Message(frames[0]) == message)
        #expect(decoder.bufferedCount == 0)
    }

    @Test func byteAtATimeDecodingGivesTheSameFrames() throws {
        var stream: [UInt8] = []
        for (index, message) in Self.samples.enumerated() {
            stream += try message.frame(requestID: UInt32(index + 1)).encoded()
        }
        var decoder = FrameDecoder()
        var decoded: [Message] = []
        for byte in stream {
            for frame in try decoder.append([byte]) { decoded.append(try Message(frame)) }
        }
        try decoder.finish()
        #expect(decoded == Self.samples)
    }

    @Test func anErrorFrameCarriesTheFacadeError() throws {
        let error = KeygateError(.interactionNotAllowed, "needs a proof")
        let message = try Message(Message(error).frame(requestID: 3))
        #expect(message.keygateError == error)
        #expect(message.keygateError?.status == .interactionNotAllowed)
        #expect(message.keygateError?.message == "needs a proof")
        #expect(Message.done.keygateError == nil)
    }

    @Test func descriptionsNeverShowSecretValues() {
        let secret = SecretData("hunter2")
        #expect(secret.description == "<SecretData: 7 bytes>")
        #expect(!"\(Message.promptAnswer(secret))".contains("hunter2"))
        let add = Message.add(AddRequest(service: "s", account: "a", data: secret))
        #expect(!"\(add)".contains("hunter2"))
    }

    @Test func theReuseWindowTravelsAfterTheQueryAndDefaultsToNone() throws {
        let query = ItemQuery(service: "s")
        let none = Message.delete(query).frame(requestID: 1)
        let five = Message.delete(query, reuseSeconds: 5).frame(requestID: 1)
        #expect(none.payload.suffix(4) == [0, 0, 0, 0])
        #expect(five.payload.suffix(4) == [0, 0, 0, 5])
        #expect(none.payload.dropLast(4) == five.payload.dropLast(4))
        // A request without the field (the layout before it existed) is malformed, not a window of 0.
        var short = five
        short.payload.removeLast(4)
        #expect(throws: ProtocolError.malformed("reuseSeconds: payload ends early")) { _ = try Message(short) }
    }

    @Test func theReuseWindowIsCappedAtAppleMaximum() throws {
        try ReuseWindow.check(0)
        try ReuseWindow.check(300)
        let error = #expect(throws: KeygateError.self) { try ReuseWindow.check(301) }
        #expect(error?.status == .param)
        #expect(error?.message.contains("reuseSeconds") == true)
    }

    @Test func lockHasNoPayload() throws {
        let frame = Message.lock.frame(requestID: 9)
        #expect(frame.type.rawValue == 0x0B)
        #expect(frame.payload.isEmpty)
        var extra = frame
        extra.payload = [1]
        #expect(throws: ProtocolError.self) { _ = try Message(extra) }
    }
}
