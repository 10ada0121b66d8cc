import KeygatePolicy
import Testing

@Suite struct ContextFileTests {
    @Test func defaultsMatchTheContract() throws {
        let context = try ContextFile(parsing: "{}", file: "ctx.json")
        #expect(context.state == AuthenticationState())
        #expect(!context.state.device.isLocked)
        #expect(context.state.device.hasBeenUnlockedSinceBoot)
        #expect(context.state.device.isPasscodeSet)
        #expect(!context.state.biometry.isAvailable)
        #expect(context.state.proofs.all.isEmpty)
        #expect(context.state.reuseSeconds == 0)
        #expect(context.state.interaction == .allow)
    }

    @Test func fullExample() throws {
        let text = """
            {"device": {"locked": false, "unlockedSinceBoot": true, "passcodeSet": true},
             "biometry": {"available": true, "enrolled": ["f1", "f2"], "lockedOut": false},
             "proofs": [{"factor": "passcode", "secondsAgo": 0},
                        {"factor": "biometry", "secondsAgo": 3, "enrolled": ["f1", "f2"]}],
             "reuseSeconds": 10, "interaction": "allow"}
            """
        let context = try ContextFile(parsing: text, file: "ctx.json")
        let enrolled = EnrollmentSetHash(templateIDs: ["f1", "f2"])
        #expect(context.state.biometry.enrollment == enrolled)
        #expect(context.state.proofs[.biometry]?.enrollment == enrolled)
        #expect(context.state.proofs[.biometry]?.time == context.now.adding(seconds: -3))
        #expect(context.state.proofs[.passcode]?.time == context.now)
        #expect(context.state.reuseSeconds == 10)
    }

    @Test func reuseIsClampedTo300() throws {
        #expect(try ContextFile(parsing: #"{"reuseSeconds": 86400}"#, file: "c").state.reuseSeconds == 300)
    }

    @Test(arguments: [
        (#"{"device": {"locked": "yes"}}"#, "c.json:1:23: device.locked: expected true or false, found a string"),
        ("{\n  \"biometry\": {\"enroled\": []}\n}", "c.json:2:16: biometry.enroled: unknown key 'enroled'"),
        (#"{"proofs": [{"factor": "pin", "secondsAgo": 1}]}"#, "c.json:1:24: proofs[0].factor: 'pin' is not one of"),
        (#"{"proofs": [{"factor": "passcode"}]}"#, "c.json:1:13: proofs[0]: a proof needs 'secondsAgo'"),
        (#"{"interaction": "never"}"#, "c.json:1:17: interaction: 'never' is not one of: allow, fail, skip"),
        (#"{"reuseSeconds": 1.5}"#, "c.json:1:18: reuseSeconds: expected a whole number, found 1.5"),
        (#"{"reuseSeconds": -1}"#, "c.json:1:18: reuseSeconds: reuseSeconds must not be negative"),
        (#"{"device": {"locked": true,}}"#, "c.json:1:28: invalid JSON: expected a quoted key"),
        (#"{"device": {}} x"#, "c.json:1:16: invalid JSON: unexpected text after the JSON value"),
        (#"{"a": 1, "a": 2}"#, "c.json:1:10: invalid JSON: duplicate key 'a'"),
        (#"[]"#, "c.json:1:1: expected an object, found an array"),
        (#"{"proofs": [{"factor": "passcode", "secondsAgo": 1, "enrolled": ["f1"]}]}"#, "only a biometry proof"),
    ])
    func errorsNameFileLineAndField(_ text: String, _ expected: String) {
        do {
            _ = try ContextFile(parsing: text, file: "c.json")
            Issue.record("expected an error for \(text)")
        } catch {
            #expect(error.description.contains(expected), "got: \(error.description)")
        }
    }
}
