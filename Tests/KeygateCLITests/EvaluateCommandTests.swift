import Foundation
import KeygateTesting
import Testing

@testable import KeygatePolicy

/// `keygate evaluate`, run as a subprocess: the decision corpus and the pinned contract.
@Suite struct EvaluateCommandTests {
    static let cases: [DecisionCase] = (try? DecisionCorpus.load()) ?? []

    /// Parses the one JSON object `keygate evaluate` prints into an outcome.
    static func outcome(of result: KeygateBinary.Result) throws -> ObservedOutcome {
        let root = try JSONField.parse(result.stdoutText, file: "stdout")
        let object = try root.object(allowing: ["decision", "status", "statusName", "requirement", "reasons"])
        let kind = try #require(try object["decision"]?.string())
        var status: KeygateStatus?
        if case .number(let literal)? = object["status"]?.node.value {
            status = KeygateStatus(rawValue: Int32(literal)!)
        }
        if let name = object["statusName"], case .string(let text) = name.node.value {
            #expect(status?.name == text)
        }
        var requirement: String?
        if let field = object["requirement"], case .string(let text) = field.node.value { requirement = text }
        let reasons = try #require(try object["reasons"]?.array()).map { try $0.string() }
        // Each reason is rendered as "code: explanation".
        let codes = reasons.map { String($0.prefix { $0 != ":" }) }
        return .decision(kind: kind, status: status, requirement: requirement, reasonCodes: codes)
    }

    @Test(arguments: cases)
    func binaryMatchesCorpus(_ decisionCase: DecisionCase) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("context.json", contents: decisionCase.contextText)
        let result = try KeygateBinary.run(decisionCase.commandLine(contextPath: path))
        let observed: ObservedOutcome
        if result.status == 0 {
            observed = try Self.outcome(of: result)
            #expect(result.stderr.isEmpty)
        } else {
            #expect(result.status == 8, "\(decisionCase): exit \(result.status), \(result.stderr)")
            #expect(result.stdout.isEmpty)
            // The last line names the status: keygate: <message> (errSecParam -50)
            #expect(result.lastErrorLine.hasPrefix("keygate: "))
            #expect(result.lastErrorLine.hasSuffix("(errSecParam -50)"))
            observed = .error(.param)
        }
        let problems = decisionCase.mismatches(observed)
        #expect(problems.isEmpty, "\(decisionCase): \(problems.joined(separator: "; "))")
        // The library and the binary agree exactly, reasons included.
        let library = try ObservedOutcome.library(decisionCase)
        if case .decision(let k1, let s1, let r1, let c1) = library,
            case .decision(let k2, let s2, let r2, let c2) = observed
        {
            #expect(k1 == k2 && s1 == s2 && r1 == r2 && c1 == c2)
        }
    }

    @Test func outputShapeIsPinned() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("ctx.json", contents: #"{"device": {"locked": true}}"#)
        let result = try KeygateBinary.run([
            "evaluate", "--context", path, "--accessible", "whenUnlockedThisDeviceOnly",
        ])
        #expect(result.status == 0)
        #expect(
            result.stdoutText
                == #"{"decision": "deny", "status": -25308, "statusName": "errSecInteractionNotAllowed", "requirement": null, "reasons": ["classUnavailable: class aku needs an unlocked device; the device is locked"]}"#
                + "\n")
    }

    @Test(arguments: [
        (["--access-control", "biometryAny,faceID"], "'faceID'"),
        (["--access-control", "userPresence,or"], "'userPresence' cannot be combined with or"),
        (["--accessible", "whenUnlockd"], "'whenUnlockd'"),
        (["--operation", "decrypt"], "'decrypt'"),
        (["--access-control", "biometryCurrentSet"], "--bound-enrollment"),
    ])
    func invalidRequestsExit8NamingTheWord(_ extra: [String], _ fragment: String) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("ctx.json", contents: "{}")
        let result = try KeygateBinary.run(["evaluate", "--context", path] + extra)
        #expect(result.status == 8)
        #expect(result.lastErrorLine.contains(fragment), "\(result.lastErrorLine)")
        #expect(result.lastErrorLine.hasSuffix("(errSecParam -50)"))
    }

    @Test func aDryRunIsAuditedOnlyIntoANamedTrail() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("ctx.json", contents: "{}")
        let trail = directory.url.appendingPathComponent("audit.jsonl").path
        let result = try KeygateBinary.run([
            "--audit", trail, "evaluate", "--context", path, "--access-control", "userPresence",
        ])
        #expect(result.status == 0)
        let lines = try String(contentsOfFile: trail, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines[0].contains("\"op\": \"evaluate\"") && lines[0].contains("\"decision\": \"authenticate\""))
        #expect(try KeygateBinary.run(["--audit", trail, "audit", "verify"]).status == 0)
    }

    @Test func badContextFilesExit2WithFileLineAndField() throws {
        let directory = try TemporaryDirectory()
        let bad = try directory.file("bad.json", contents: "{\n  \"biometry\": {\"available\": 1}\n}\n")
        var result = try KeygateBinary.run(["evaluate", "--context", bad])
        #expect(result.status == 2)
        #expect(
            result.lastErrorLine
                == "keygate: \(bad):2:29: biometry.available: expected true or false, found a number (errSecParam -50)")
        result = try KeygateBinary.run(["evaluate", "--context", directory.url.path + "/missing.json"])
        #expect(result.status == 2)
        #expect(result.lastErrorLine.contains("missing.json: cannot read the file"))
        result = try KeygateBinary.run(["evaluate"])
        #expect(result.status == 2)
        #expect(result.lastErrorLine == "keygate: missing required option '--context' (errSecParam -50)")
    }
}
