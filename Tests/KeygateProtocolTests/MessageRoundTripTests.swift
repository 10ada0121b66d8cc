import KeygatePolicy
import KeygateProtocol
import Testing

/// Every message survives encode → frame bytes → decode unchanged.
@Suite struct MessageRoundTripTests {
    static let presence = try! AccessControl(protection: .whenPasscodeSetThisDeviceOnly, flags: .userPresence)

    static let samples: [Message] = [
        .hello(minimumVersion: 1, maximumVersion: 3, accessGroups: ["a", "b.c"], client: "keygate"),
        .status,
        .add(
            AddPayload(
                service: "api", account: "me", accessGroup: "g", label: "L", generic: [0, 1, 255],
                synchronizable: true, protection: .accessible(.afterFirstUnlock), data: SecretBytes(bytes: [1, 2, 3]),
                authenticationUI: .fail, otherAttributes: ["srvr": "x", "acct2": ""])),
        .add(
            AddPayload(
                service: "s", account: "a", protection: .accessControl(presence), data: SecretBytes(bytes: []))),
        .copyMatching(
            QueryPayload(
                service: "s", account: nil, accessGroup: "g", label: "l", generic: [9], synchronizable: .any,
                protection: .whenUnlocked, matchLimit: .count(7), returnData: true, returnAttributes: true,
                authenticationUI: .skip, operationPrompt: "why", otherAttributes: ["k": "v"])),
        .copyMatching(QueryPayload(matchLimit: .all)),
        .update(
            QueryPayload(service: "s", matchLimit: .one),
            ChangesPayload(
                service: "t", account: "u", accessGroup: "g", label: "l", generic: [], synchronizable: false,
                protection: .accessControl(presence), data: SecretBytes(bytes: [7]), otherAttributes: ["z": "1"])),
        .update(QueryPayload(), ChangesPayload()),
        .delete(QueryPayload(service: "s", synchronizable: .yes)),
        .auditShow(limit: 20),
        .auditVerify,
        .promptAnswer(SecretBytes(bytes: Array("pass".utf8))),
        .promptAnswer(nil),
        .cancel,
        .helloReply(version: 1, daemonVersion: "keygated 0.1"),
        .statusReply(
            StatusPayload(
                mode: "daemon", uid: 1000, gid: 1000, pid: 4242, executable: "/usr/bin/keygate",
                daemonVersion: "v", pidfdSource: "SO_PEERPIDFD")),
        .done,
        .items([
            ItemPayload(
                attributes: AttributesPayload(
                    service: "s", account: "a", accessGroup: "g", synchronizable: false, label: nil, generic: [3],
                    accessControl: presence, created: Timestamp(nanoseconds: 5), modified: Timestamp(nanoseconds: -1)),
                data: SecretBytes(bytes: [0xFF])),
            ItemPayload(attributes: nil, data: nil),
        ]),
        .auditRecords(["{}", "{\"a\":1}"]),
        .auditVerified(records: 12, problem: nil),
        .auditVerified(records: 0, problem: "line 3: chain broken"),
        .prompt(style: .echoOff, text: "Password: "),
        .error(status: -25300, message: "no item"),
    ]

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

    @Test func descriptionsNeverShowSecretBytes() {
        let secret = SecretBytes(bytes: Array("hunter2".utf8))
        #expect(secret.description == "<SecretBytes: 7 bytes>")
        #expect(!"\(Message.promptAnswer(secret))".contains("hunter2"))
    }
}
