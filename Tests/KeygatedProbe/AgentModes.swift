import Glibc
import KeygateItems
import KeygateProtocol

// The probe's misbehaving-agent mode, for the daemon's agent tests:
//   bad-agent KIND   registers as its session's authentication agent, prints "registered", and at
//                    the first question sends, by KIND:
//                      intrude    a request (status) instead of an answer
//                      garbage    bytes that are no frame (a header of another protocol version)
//                      oversized  a frame header announcing 1 GiB
//                      stray      an answer under an id no question has, then a cancel of the real one
//                    then prints what the daemon said ("error STATUS MESSAGE", "cancelled") and
//                    "closed" once the daemon closes the connection.

enum AgentModes {
    /// Runs `command` when it is an agent mode; false for any other command.
    static func run(_ command: String, _ rest: [String], _ client: inout Client) -> Bool {
        guard command == "bad-agent", let kind = rest.first else { return false }
        guard case .done = client.request(.registerAgent) else { fail("registerAgent was not acknowledged") }
        print("registered")
        fflush(nil)
        var agent = RelayClient(fd: client.fd, nextID: client.nextID)
        let question = agent.nextFrame()
        guard case .agentPrompt = try? Message(question) else { fail("the first frame was no prompt") }
        switch kind {
        case "intrude": agent.send(.status, id: question.requestID)
        case "garbage":
            writeAll([0, 0, 0, 12, FrameLimits.version &+ 9, 0x09, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4], to: client.fd)
        case "oversized": writeAll([0x40, 0, 0, 0, FrameLimits.version, 0x09, 0, 0, 0, 0, 0, 1], to: client.fd)
        case "stray":
            agent.send(.promptAnswer(SecretData("stray-answer")), id: question.requestID &+ 1000)
            agent.send(.cancel, id: question.requestID)
            print("cancelled")
        default: fail("unknown bad-agent kind \(kind)")
        }
        fflush(nil)
        while let frame = agent.nextFrameOrNil() {
            if case .error(let status, let text, _) = try? Message(frame) { print("error \(status) \(text)") }
            fflush(nil)
        }
        print("closed")
        return true
    }
}

extension RelayClient {
    /// The next frame; exits with "connection closed" when there is none.
    mutating func nextFrame() -> Frame {
        guard let frame = nextFrameOrNil() else { fail("connection closed") }
        return frame
    }

    /// The next frame, or nil once the daemon closed the connection.
    mutating func nextFrameOrNil() -> Frame? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while pending.isEmpty {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { return nil }
            do {
                pending += try decoder.append(buffer[0..<count])
            } catch {
                fail("bad reply: \(error)")
            }
        }
        return pending.removeFirst()
    }
}
