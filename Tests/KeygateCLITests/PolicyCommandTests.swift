import Foundation
import KeygateTesting
import Testing

/// `--policies DIR` and `keygate policy …`, end to end through the binary.
@Suite struct PolicyCommandTests {
    static let shipped: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/") + "/Policies"
    }()

    static func directory(_ world: CLIWorld, _ files: [String: String]) throws -> String {
        let path = world.directory.url.appendingPathComponent("policies").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        for (name, text) in files { try text.write(toFile: path + "/" + name, atomically: true, encoding: .utf8) }
        return path
    }

    @Test func policiesApplyToItemCommands() throws {
        let world = try CLIWorld()
        let policies = try Self.directory(
            world,
            [
                "10-bank.policy": """
                rule "bank" {
                  match service "bank.*"
                  on add require at-least "whenUnlockedThisDeviceOnly devicePasscode"
                }
                """,
                "20-export.policy": "rule \"keep\" { match service \"bank.*\" forbid export }",
            ])
        var result = try world.run(
            ["--policies", policies, "add", "--service", "bank.token", "--account", "me"],
            stdin: Data("v".utf8))
        #expect(result.status == 10, "\(result.stderr)")
        #expect(result.lastErrorLine.contains("denied by rule 'bank'"))
        let trail = try String(contentsOfFile: world.audit, encoding: .utf8)
        #expect(trail.contains("\"rules\": [\"bank\"], \"decision\": \"deny\""), "\(trail)")
        result = try world.run(
            [
                "--policies", policies, "add", "--service", "bank.token", "--account", "me", "--accessible",
                "whenUnlockedThisDeviceOnly", "--access-control", "devicePasscode",
            ], stdin: Data("v".utf8))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try world.add("mail", "me", Data("v".utf8), []).status == 0, "no rule: the item's access control alone")
    }

    @Test func aBrokenPolicyFileRefusesToRun() throws {
        let world = try CLIWorld()
        let policies = try Self.directory(
            world, ["a.policy": "rule \"ok\" { forbid export }", "b.policy": "rule \"bad\" {\n  on raed forbid\n}"])
        let result = try world.add("api", "me", Data("v".utf8), [])
        #expect(result.status == 0)
        let refused = try world.run(["--policies", policies, "list"])
        #expect(refused.status == 2)
        #expect(
            refused.lastErrorLine == "keygate: \(policies)/b.policy:2:6: expected an operation (add, read, update, "
                + "delete, export, import, list, sign, computeKey), found 'raed' (errSecParam -50)")
        #expect(
            try world.run(["--policies", policies + "/missing", "list"]).status == 0, "a missing directory: no rules")
        // Files that are not policies are not read.
        let other = try Self.directory(world, ["README.txt": "rule"])
        try FileManager.default.removeItem(atPath: other + "/a.policy")
        try FileManager.default.removeItem(atPath: other + "/b.policy")
        #expect(try world.run(["--policies", other, "list"]).status == 0)
    }

    @Test func grantsApplyToTheCurrentExecutable() throws {
        let world = try CLIWorld()
        let policies = try Self.directory(
            world, ["grants.policy": "grant access-group \"keygate\" to program \"/usr/bin/someone-else\""])
        let refused = try world.run(
            ["--policies", policies, "add", "--service", "api", "--account", "me"],
            stdin: Data("v".utf8))
        #expect(refused.lastErrorLine.contains("errSecMissingEntitlement -34018"), "\(refused.stderr)")
        let trail = try String(contentsOfFile: world.audit, encoding: .utf8)
        #expect(trail.contains("\"op\": \"entitlement\""))
        #expect(trail.contains("grant:keygate@grants.policy:1"))
        let binary = KeygateBinary.url.resolvingSymlinksInPath().path
        let allowed = try Self.directory(
            world, ["grants.policy": "grant access-group \"keygate\" to program \"\(binary)\""])
        #expect(
            try world.run(
                ["--policies", allowed, "add", "--service", "api", "--account", "me"],
                stdin: Data("v".utf8)
            ).status == 0)
    }

    @Test func explainWithAContextEvaluatesTheItemUnderTheBound() throws {
        let world = try CLIWorld()
        let context = try world.directory.file(
            "ctx.json", contents: #"{"proofs": [{"factor": "passcode", "secondsAgo": 45}], "reuseSeconds": 300}"#)
        let result = try world.run([
            "--policies", Self.shipped + "/examples", "policy", "explain", "--service", "com.example.pay.card",
            "--account", "me", "--operation", "read", "--access-group", "pay", "--access-control", "devicePasscode",
            "--accessible", "whenUnlockedThisDeviceOnly", "--context", context,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        #expect(json["combinedRequirement"] as? [String] == ["passcode"], "a 45 s old proof is over the 30 s bound")
        let item = try #require(json["item"] as? [String: Any])
        #expect(item["decision"] as? String == "authenticate")
    }

    /// Makes `text` the user's organisation policy (`$XDG_CONFIG_HOME/keygate/policies/org.policy`).
    static func userPolicy(_ world: CLIWorld, _ text: String) throws {
        let config = world.directory.url.appendingPathComponent("config").path
        try FileManager.default.createDirectory(atPath: config + "/keygate/policies", withIntermediateDirectories: true)
        try text.write(toFile: config + "/keygate/policies/org.policy", atomically: true, encoding: .utf8)
        world.extraEnvironment["XDG_CONFIG_HOME"] = config
    }

    @Test func userPoliciesApplyByDefault() throws {
        let world = try CLIWorld()
        try Self.userPolicy(world, "rule \"no-adds\" { forbid add }")
        let result = try world.add("api", "me", Data("v".utf8), [])
        #expect(result.status == 10)
        #expect(result.lastErrorLine.contains("'no-adds'"))
    }

    /// The credential helpers open the store like every item command, so the organisation's
    /// rules bind them too (a `forbid add` is not bypassed through git's or docker's protocol).
    @Test func credentialHelpersAreBoundByTheRules() throws {
        let world = try CLIWorld()
        try Self.userPolicy(world, "rule \"no-adds\" { forbid add }")
        let git = try world.run(
            ["credential", "store"], stdin: Data("protocol=https\nhost=example.com\nusername=u\npassword=p\n\n".utf8))
        #expect(git.status == 10, "\(git.stderr)")
        #expect(git.stderr.contains("'no-adds'"), "\(git.stderr)")
        let docker = try world.run(
            ["docker-credential", "store"],
            stdin: Data(#"{"ServerURL":"https://r.example","Username":"u","Secret":"s"}"#.utf8))
        #expect(docker.status != 0)
        #expect(docker.stdoutText.contains("'no-adds'") || docker.stderr.contains("'no-adds'"), "\(docker.stdoutText)")
        world.extraEnvironment["XDG_CONFIG_HOME"] = nil
        #expect(try world.run(["list"]).stdoutText.isEmpty, "nothing was stored")
    }

    @Test func checkExplainAndTest() throws {
        let world = try CLIWorld()
        var result = try world.run(["policy", "check", Self.shipped + "/default.policy", Self.shipped + "/examples"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText.hasPrefix("ok: 6 rules, 2 grants"))

        let broken = try Self.directory(world, ["x.policy": "rule \"x\" { on read require fresh 301s }"])
        result = try world.run(["policy", "check", broken])
        #expect(result.status == 2)
        #expect(result.lastErrorLine.contains("x.policy:1:34: freshness bound 301s is over 300s"))

        result = try world.run([
            "--policies", Self.shipped + "/examples", "policy", "explain", "--service", "com.example.pay.card",
            "--account", "me", "--operation", "read", "--access-group", "pay", "--access-control", "devicePasscode",
            "--accessible", "whenUnlockedThisDeviceOnly",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        #expect(json["decision"] as? String == "allow")
        #expect(json["decidingRules"] as? [String] == ["payment-tokens"])
        #expect(json["freshWithin"] as? Int == 30)

        result = try world.run([
            "--policies", Self.shipped + "/examples", "policy", "explain", "--service", "x", "--account", "me",
            "--operation", "read", "--access-group", "com.example.app", "--program", "/usr/bin/python3",
        ])
        let denied = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        #expect(denied["decision"] as? String == "deny")
        #expect(denied["statusName"] as? String == "errSecMissingEntitlement")
        #expect(denied["decidingRules"] as? [String] == ["grant:com.example.app@entitlements.policy:4"])

        result = try world.run(["policy", "test", Self.shipped + "/examples/recovery-keys.tests.json"])
        #expect(result.status == 0, "\(result.stdoutText)")
        #expect(result.stdoutText.contains("6 passed, 0 failed"))
        let failing = try world.directory.file(
            "failing.tests.json",
            contents: """
                {"policies": ["\(Self.shipped)/default.policy"],
                 "cases": [{"name": "wrong", "operation": "add", "service": "s", "accessible": "always",
                            "expect": {"decision": "allow", "rules": []}}]}
                """)
        result = try world.run(["policy", "test", failing])
        #expect(result.status == 1)
        #expect(result.stdoutText.contains("FAIL \(failing): wrong: decision deny, expected allow"))
    }

    /// A grant (or a `match program`) naming a symbolic link never matches, since the kernel names
    /// the resolved file; one naming an interpreter admits every script it runs. `policy check`
    /// warns about both (the check still passes: a warning is advice), and says the target.
    @Test func checkWarnsAboutProgramsThatAreLinksOrInterpreters() throws {
        let world = try CLIWorld()
        let python = URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path
        try #require(python != "/usr/bin/python3", "this test needs /usr/bin/python3 to be a symbolic link")
        let script = try world.directory.file("tool.sh", contents: "#!/bin/sh\necho hi\n")
        let path = try Self.directory(
            world,
            [
                "grants.policy": """
                grant access-group "tools" to program "/usr/bin/python3"
                grant access-group "sleepers" to program "/usr/bin/sleep"
                grant access-group "scripted" to program "\(script)", "/usr/bin/python*"
                rule "scripts" {
                  match program "/usr/bin/env"
                  on read forbid
                }

                """
            ])
        let result = try world.run(["policy", "check", path])
        #expect(result.status == 0, "\(result.stderr)")
        let warnings = result.stderr.split(separator: "\n").filter { $0.hasPrefix("keygate: warning: ") }
        #expect(warnings.count == 5, "\(result.stderr)")
        #expect(
            warnings.contains {
                $0.contains("grants.policy:1:1: the grant of 'tools' names /usr/bin/python3, which is a symbolic link")
                    && $0.contains("(\(python)), so this never matches; name \(python) instead")
            }, "\(result.stderr)")
        #expect(
            warnings.contains {
                $0.contains("the grant of 'scripted' names \(script), a script: the kernel names its interpreter")
            },
            "\(result.stderr)")
        #expect(
            warnings.contains { $0.contains("the grant of 'scripted' names interpreters (/usr/bin/python*)") },
            "\(result.stderr)")
        #expect(
            warnings.contains { $0.contains("the grant of 'tools' names the interpreter /usr/bin/python3") },
            "\(result.stderr)")
        #expect(
            warnings.contains { $0.contains("rule 'scripts' names the interpreter /usr/bin/env") },
            "\(result.stderr)")
        #expect(!result.stderr.contains("/usr/bin/sleep"), "\(result.stderr)")
    }

    /// A misspelled key would make a case check nothing (JSONDecoder ignored it: "2 passed"):
    /// it is refused with exit 2, naming the file, line, column and field, and no case runs.
    @Test func aTestFileWithAnUnknownKeyOrWrongTypeIsRefusedWithItsLine() throws {
        let world = try CLIWorld()
        let misspelled = try world.directory.file(
            "misspelled.tests.json",
            contents: """
                {"policies": ["\(Self.shipped)/default.policy"],
                 "cases": [{"name": "a", "operation": "add", "service": "s", "accessible": "always",
                            "expect": {"decision": "deny", "rules": ["default-minimum"], "statsu": "x"}},
                           {"name": "b", "operation": "add", "acount": "me",
                            "expect": {"decision": "allow", "rules": []}}]}
                """)
        var result = try world.run(["policy", "test", misspelled])
        #expect(result.status == 2, "\(result.stdoutText)")
        #expect(result.stdoutText.isEmpty, "\(result.stdoutText)")
        #expect(
            result.lastErrorLine.contains("\(misspelled):3:74: cases[0].expect.statsu: unknown key 'statsu'"),
            "\(result.stderr)")

        let wrongType = try world.directory.file(
            "wrong-type.tests.json",
            contents: """
                {"policies": ["\(Self.shipped)/default.policy"],
                 "cases": [{"name": "a", "operation": "add",
                            "expect": {"decision": "allow", "rules": "default-minimum"}}]}
                """)
        result = try world.run(["policy", "test", wrongType])
        #expect(result.status == 2, "\(result.stdoutText)")
        #expect(
            result.lastErrorLine.contains(
                "\(wrongType):3:54: cases[0].expect.rules: expected an array, found a string"),
            "\(result.stderr)")
    }
}
